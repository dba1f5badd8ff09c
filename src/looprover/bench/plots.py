"""Plots of bench results: a quantile plot of every engine and a scatter plot of two, as PNG and SVG.

Why these two: they are the plots of SV-COMP and CHC-COMP reports. The quantile plot shows how many tasks an
engine solves correctly within a given CPU time (one line per engine or reference solver, the n-th fastest
correct answer at x = n), so engines are compared over the whole set at once; the scatter plot compares two
engines task by task (log-log CPU time, a task one of them did not solve correctly drawn on the border), which
shows where one is faster and which tasks only one solves. Both are drawn from result CSVs, so a bench run
and `bench --compare A.csv B.csv` draw the same way. Matplotlib's object API with the Agg canvas: no display,
no global pyplot state.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from looprover.bench.compare import Row, read_results

FORMATS = ("png", "svg")
BENCH_EXTRA = "pip install -e '.[bench]' (setup.sh installs it)"


def unavailable() -> str | None:
    """Why no plots can be drawn (matplotlib, an optional package of the `bench` extra, is missing), or None."""
    import importlib
    try:
        importlib.import_module("matplotlib")
    except ImportError:
        return f"plots need matplotlib, which is not installed: {BENCH_EXTRA}"
    return None
MIN_TIME = 0.01         # log axes: a run measured at 0.00 s is drawn at 10 ms


@dataclass(frozen=True)
class Series:
    """One engine's runs of one bench run: (task, property) -> row."""
    label: str
    rows: dict[tuple[str, str], Row]

    def solved_times(self) -> list[float]:
        return sorted(max(r.cpu, MIN_TIME) for r in self.rows.values() if r.result == "correct")


def series_of(csv_path: Path, prefix: str = "") -> list[Series]:
    """The engines of one results CSV, in the order the run listed them."""
    return [Series(prefix + solver, rows) for solver, rows in read_results(csv_path).items()]


def _figure(title: str):
    from matplotlib.figure import Figure
    fig = Figure(figsize=(7, 5), layout="constrained")
    ax = fig.add_subplot()
    ax.set_title(title, fontsize=10)
    return fig, ax


def _save(fig, base: Path) -> list[Path]:
    base.parent.mkdir(parents=True, exist_ok=True)
    paths = [base.with_name(f"{base.name}.{fmt}") for fmt in FORMATS]
    for p in paths:
        fig.savefig(p, format=p.suffix[1:], dpi=120)
    return paths


def quantile_plot(series: Sequence[Series], base: Path, title: str, timeout: float | None = None) -> list[Path]:
    """CPU time (log) of the n-th fastest correct answer against n, one step line per series."""
    from matplotlib.ticker import MaxNLocator
    fig, ax = _figure(title)
    for s in series:
        times = s.solved_times()
        ax.plot(range(1, len(times) + 1), times, marker=".", label=f"{s.label} ({len(times)})")
    if timeout:
        ax.axhline(timeout, color="grey", linestyle=":", linewidth=1, label=f"--timeout {timeout:g} s (wall clock)")
    ax.set_yscale("log")
    ax.set_xlabel("number of tasks solved correctly")
    ax.set_ylabel("CPU time (s)")
    ax.set_xlim(left=0)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, base)


def scatter_plot(x: Series, y: Series, base: Path, title: str, timeout: float | None = None) -> list[Path]:
    """Per task the CPU time of x against y (log-log). A run that did not answer correctly (unknown, timeout,
    wrong) is drawn on the border line beyond every measured time, so it is seen without distorting the axes."""
    keys = [k for k in x.rows if k in y.rows and x.rows[k].result not in ("unsupported", "invalid")]
    fig, ax = _figure(title)
    measured = [max(s.rows[k].cpu, MIN_TIME) for k in keys for s in (x, y)]
    border = max([timeout or 0.0, *measured, 1.0]) * 2

    def value(s: Series, k) -> float:
        r = s.rows[k]
        return max(r.cpu, MIN_TIME) if r.result == "correct" else border

    groups = {"both correct": [], f"only {x.label}": [], f"only {y.label}": [], "neither": []}
    for k in keys:
        cx, cy = x.rows[k].result == "correct", y.rows[k].result == "correct"
        name = ("both correct" if cy else f"only {x.label}") if cx else (f"only {y.label}" if cy else "neither")
        groups[name].append((value(x, k), value(y, k)))
    for (name, pts), marker in zip(groups.items(), ("o", ">", "^", "x")):
        if pts:
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], marker=marker, s=24, alpha=0.7,
                       label=f"{name} ({len(pts)})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    low = MIN_TIME / 2
    ax.set_xlim(low, border * 1.5)
    ax.set_ylim(low, border * 1.5)
    ax.plot([low, border], [low, border], color="grey", linewidth=0.8)             # equal time
    for line in (ax.axvline, ax.axhline):
        line(border, color="grey", linestyle="--", linewidth=0.8)                   # not solved correctly
    ax.set_xlabel(f"CPU time (s) of {x.label}; not solved correctly: on the dashed border")
    ax.set_ylabel(f"CPU time (s) of {y.label}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, base)


def bench_plots(csv_path: Path, directory: Path, timeout: float | None = None) -> list[Path]:
    """The plots of one bench run, named after its CSV: a quantile plot of every engine, and a scatter plot of
    the first two engines when the run had two or more."""
    series = series_of(csv_path)
    stem = directory / csv_path.stem
    paths = quantile_plot(series, stem.with_name(f"{stem.name}-quantile"), f"{csv_path.name}: quantile plot",
                          timeout)
    if len(series) >= 2:
        paths += scatter_plot(series[0], series[1], stem.with_name(f"{stem.name}-scatter"),
                              f"{csv_path.name}: {series[0].label} vs {series[1].label}", timeout)
    return paths


def compare_plots(a: Path, b: Path, directory: Path, timeout: float | None = None) -> list[Path]:
    """The plots of `bench --compare A B`: every engine of both runs in one quantile plot, and a scatter plot
    of A against B for the first engine both runs have (a run before a change against one after it)."""
    sa, sb = series_of(a, "A: "), series_of(b, "B: ")
    stem = directory / f"compare-{a.stem}-{b.stem}"
    title = f"A = {a.name}, B = {b.name}"
    paths = quantile_plot([*sa, *sb], stem.with_name(f"{stem.name}-quantile"), title, timeout)
    common = [(x, y) for x in sa for y in sb if x.label[3:] == y.label[3:]]
    if common:
        x, y = common[0]
        paths += scatter_plot(x, y, stem.with_name(f"{stem.name}-scatter"), title, timeout)
    return paths
