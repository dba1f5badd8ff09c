"""Plots of bench results: the files of the quantile and scatter plots, from bench runs and from --compare."""
from __future__ import annotations

from helpers.bench_csv import write_results

from looprover import cli
from looprover.bench.plots import bench_plots, compare_plots, series_of

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

# (task, solver, status, result, cpu): tpa solves t1-t3, z3-spacer t1, t2 and t4; t5 nobody; t6 is not run
ROWS = [("t1", "tpa", "TRUE", "correct", 0.0), ("t1", "z3-spacer", "TRUE", "correct", 0.4),
        ("t2", "tpa", "FALSE", "correct", 3.5), ("t2", "z3-spacer", "FALSE", "correct", 1.0),
        ("t3", "tpa", "TRUE", "correct", 12.0), ("t3", "z3-spacer", "UNKNOWN", "unknown", 21.0),
        ("t4", "tpa", "UNKNOWN", "unknown", 20.5), ("t4", "z3-spacer", "TRUE", "correct", 0.2),
        ("t5", "tpa", "UNKNOWN", "unknown", 20.1), ("t5", "z3-spacer", "FALSE", "wrong", 0.3),
        ("t6", "tpa", "UNKNOWN", "unsupported", 0.0), ("t6", "z3-spacer", "UNKNOWN", "unsupported", 0.0)]


def _write(path, rows):
    return write_results(path, [{"task": task, "solver": solver, "engine": solver, "status": status,
                                 "result": result, "cpu_time": cpu} for task, solver, status, result, cpu in rows])


def _check_files(paths, names):
    assert sorted(p.name for p in paths) == sorted(names)
    for p in paths:
        data = p.read_bytes()
        assert len(data) > 1000
        if p.suffix == ".png":
            assert data.startswith(PNG_MAGIC)
        else:
            assert b"<svg" in data[:2000]


def test_series_count_only_correct_answers(tmp_path):
    tpa, spacer = series_of(_write(tmp_path / "r.csv", ROWS))
    assert (tpa.label, spacer.label) == ("tpa", "z3-spacer")
    assert tpa.solved_times() == [0.01, 3.5, 12.0]          # 0.00 s drawn at 10 ms on the log axis
    assert spacer.solved_times() == [0.2, 0.4, 1.0]         # the wrong FALSE on t5 is not "solved"


def test_bench_plots_of_two_engines(tmp_path):
    csv_path = _write(tmp_path / "run.csv", ROWS)
    paths = bench_plots(csv_path, tmp_path / "plots", timeout=20)
    _check_files(paths, ["run-quantile.png", "run-quantile.svg", "run-scatter.png", "run-scatter.svg"])


def test_one_engine_has_no_scatter_plot_and_an_engine_may_solve_nothing(tmp_path):
    rows = [r for r in ROWS if r[1] == "tpa"] + [("t1", "bmc", "UNKNOWN", "unknown", 1.0)]
    paths = bench_plots(_write(tmp_path / "one.csv", [r for r in rows if r[1] == "tpa"]), tmp_path)
    _check_files(paths, ["one-quantile.png", "one-quantile.svg"])
    paths = bench_plots(_write(tmp_path / "none.csv", [r for r in rows if r[1] == "bmc"]), tmp_path)
    _check_files(paths, ["none-quantile.png", "none-quantile.svg"])


def test_compare_plots_pair_the_same_engine_of_both_runs(tmp_path):
    a = _write(tmp_path / "a.csv", ROWS)
    b = _write(tmp_path / "b.csv", [(t, s, st, res, cpu * 2) for t, s, st, res, cpu in ROWS])
    paths = compare_plots(a, b, tmp_path / "out")
    _check_files(paths, [f"compare-a-b-{kind}.{fmt}" for kind in ("quantile", "scatter") for fmt in ("png", "svg")])


def test_compare_command_writes_plots_where_asked(tmp_path, capsys):
    a = _write(tmp_path / "a.csv", ROWS)
    b = _write(tmp_path / "b.csv", ROWS[:4])
    assert cli.main(["bench", "--compare", str(a), str(b), "--plots", str(tmp_path / "p")]) == 0
    out = capsys.readouterr().out
    assert f"plots: {tmp_path / 'p' / 'compare-a-b-quantile.png'}" in out
    assert len(list((tmp_path / "p").iterdir())) == 4
    assert cli.main(["bench", "--compare", str(a), str(b), "--no-plots"]) == 0
    assert "plots:" not in capsys.readouterr().out
    assert not list(tmp_path.glob("compare-*"))

