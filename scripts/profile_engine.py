"""Where an engine's time goes: `verify` run in this process under cProfile, summarised.

    .venv/bin/python scripts/profile_engine.py FILE [verify options ...] [--top N] [--save PROF]

e.g. `scripts/profile_engine.py task.smt2 --engine tpa --option tpa.variant=split --timeout 30`.

`verify` normally runs its job (and the portfolio its engines) in child processes, which a profiler started
here does not see; this script runs the job in this process instead (the single engine named by `--engine`; the
portfolio's engines still fork). It prints:
- time in z3's native calls, grouped by the z3 Python API function that made them (`Solver.check`, `substitute`,
  `simplify`, `Tactic.apply`, ...): the part no Python change can reduce, only fewer or smaller calls;
- time per looprover module and per function (self and cumulative), so the Python overhead around the calls
  (term building, model reading, Houdini loops) shows where it is.
Issue 27 asked for this profile before any change to the TPA engines; it is a measuring tool, not a test.
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from looprover import cli, jobs  # noqa: E402


def _in_process(job, options, start, deadline):
    return jobs.run_job(job, options, start, deadline)


def _summary(stats: pstats.Stats, top: int) -> None:
    raw = stats.stats            # (file, line, name) -> (cc, nc, tottime, cumtime, callers)
    total = sum(v[2] for v in raw.values())
    native = defaultdict(float)   # z3 API function -> time spent in z3's C library under it
    for (file, _line, name), (_cc, _nc, tt, _ct, callers) in raw.items():
        if "z3core.py" not in file:
            continue
        # a z3core.py wrapper's self time is the native call; charge it to the z3 API function(s) that called it
        api = [(c, v[2]) for c, v in callers.items() if c[0].endswith("z3.py")]
        if not api:
            native[f"(direct) {name}"] += tt
            continue
        share = sum(w for _, w in api) or 1.0
        for (cf, _cl, cn), w in api:
            native[f"z3.{cn}"] += tt * w / share
    z3_total = sum(native.values())
    print(f"total profiled time {total:.2f} s; in z3's native library {z3_total:.2f} s "
          f"({100 * z3_total / max(total, 1e-9):.0f} %)")
    print("\nz3 native time by API function:")
    for k, v in sorted(native.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {v:8.3f} s  {k}")
    per_module = defaultdict(float)
    for (file, _line, _name), (_cc, _nc, tt, _ct, _callers) in raw.items():
        if "looprover" in file:
            per_module[file.split("looprover/", 1)[-1]] += tt
        elif "z3" in file:
            per_module["(z3 python + native)"] += tt
        else:
            per_module["(other)"] += tt
    print("\nself time per module:")
    for k, v in sorted(per_module.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {v:8.3f} s  {k}")
    print("\nlooprover functions by cumulative time:")
    rows = [((f, ln, n), v) for (f, ln, n), v in raw.items() if "looprover" in f]
    for (f, ln, n), v in sorted(rows, key=lambda kv: -kv[1][3])[:top]:
        print(f"  {v[3]:8.3f} s cum {v[2]:7.3f} s self {v[1]:7d} calls  {f.split('looprover/', 1)[-1]}:{ln} {n}")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--save", type=Path, help="write the raw cProfile data here (for snakeviz, pstats)")
    own, rest = ap.parse_known_args(argv)
    cli.run_job_limited = _in_process             # the job in this process, where the profiler sees it
    prof = cProfile.Profile()
    t0 = time.monotonic()
    prof.enable()
    code = cli.main(["verify", *rest])
    prof.disable()
    print(f"\nwall time {time.monotonic() - t0:.2f} s, exit code {code}\n", file=sys.stderr)
    if own.save:
        prof.dump_stats(own.save)
    _summary(pstats.Stats(prof), own.top)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
