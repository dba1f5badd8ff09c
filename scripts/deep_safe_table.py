#!/usr/bin/env python3
"""Time to decide deep_safe_N (a safe loop of N iterations whose proof needs y = 2x) for growing N.

    .venv/bin/python scripts/deep_safe_table.py [--template PATH] [--engines labmc,bmc] [--timeout S]
                                                [--n 10,1000,1000000,1000000000] [--repeat R]

LABMC's time should not grow with N: the loop becomes one abstract iteration x = x0 + k, y = y0 + 2k
(mod 2^32), so the BMC problem is the same size for every N. BMC, for comparison, has to unwind N times.
TPA's time should not grow with N either (the transition invariant y'-y = 2(x'-x) closes at level 1), and on
`--template ../shared/examples/underapprox_counter_N.c.in` (the same loop, the assertion negated) its
counterexample depth is found through exact powers in about log2(N) levels.
`--template ../shared/examples/underapprox_buffer_N.c.in --engines accel --encodings int,bv` is the
under-approximation table of issue 11 (a buffer overflow behind N iterations, in both encodings).
Each run is a fresh `looprover verify` process (what a user sees, including start-up); the table shows the
verdict and the median wall-clock time over `--repeat` runs.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_TEMPLATE = REPO / "tests" / "helpers" / "programs" / "deep_safe_N.c.in"


def run(engine: str, path: Path, timeout: float, encoding: str = "int") -> tuple[str, float, float]:
    """(status, wall-clock seconds of the process, the engine's own time); `encoding` int or bv."""
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "looprover", "verify", "--engine", engine, "--timeout",
                        str(timeout), "--json", "--bitvector" if encoding == "bv" else "--integer", str(path)],
                       capture_output=True, text=True,
                       timeout=timeout + 60, stdin=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    try:
        out = json.loads(r.stdout)
        return out.get("status", "?"), wall, float(out.get("time") or 0.0)
    except json.JSONDecodeError:
        return "ERROR", wall, float("nan")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--template", type=Path, default=DEFAULT_TEMPLATE)
    ap.add_argument("--engines", default="labmc")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--n", default="10,1000,1000000,1000000000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--encodings", default="int", help="int, bv or int,bv: a column per engine and encoding")
    args = ap.parse_args(argv)
    text = args.template.read_text()
    ns = [int(x) for x in args.n.split(",")]
    encodings = args.encodings.split(",")
    engines = [(e, enc) for e in args.engines.split(",") for enc in encodings]
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        header = args.template.parent / "sv.h"
        if header.exists():
            shutil.copy(header, d / "sv.h")
        print(f"median of {args.repeat} runs: verdict, wall-clock time of the process (engine time)")
        print(f"{'N':>12} | " + " | ".join(f"{e + ' ' + enc:^28}" for e, enc in engines))
        print("-" * 13 + "+" + "+".join("-" * 30 for _ in engines))
        for n in ns:
            f = d / (args.template.name.replace(".c.in", "").replace("_N", "") + f"_{n}.c")
            f.write_text(text.replace("@N@", str(n)))
            cells = []
            for e, enc in engines:
                results = [run(e, f, args.timeout, enc) for _ in range(args.repeat)]
                status = results[0][0] if len({r[0] for r in results}) == 1 else "MIXED"
                wall = statistics.median(r[1] for r in results)
                eng = statistics.median(r[2] for r in results)
                cells.append(f"{status:>7} {wall:7.2f} s ({eng:6.2f} s)")
            print(f"{n:>12} | " + " | ".join(f"{c:^28}" for c in cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
