#!/usr/bin/env python3
"""How far past its --timeout does `looprover verify` run? (issue 9: the limit is T + 2 s, whatever the engine.)

Takes a results CSV of `looprover bench` (any engines, any limit), picks for each engine the N tasks it spent the
most wall time on, runs `python -m looprover verify TASK --engine E --timeout T --json` on each, one at a time,
and prints the wall time of every run, its overrun past T, and the worst overrun per engine.

    python scripts/deadline_overrun.py RESULTS.csv [--timeout 10] [--count 20] [--engines bmc,tpa]
"""
from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path


def slowest(csv_path: Path, count: int, engines: list[str] | None) -> dict[str, list[tuple[str, str]]]:
    """engine -> [(input file, property spec)] of its `count` longest runs in the CSV."""
    runs: dict[str, list[tuple[float, str, str]]] = defaultdict(list)
    with csv_path.open() as fh:
        for row in csv.DictReader(fh):
            engine = row.get("solver") or row["engine"]
            if row["result"] in ("unsupported", "invalid") or (engines and engine not in engines):
                continue
            runs[engine].append((float(row["wall_time"] or 0), row["input"], row["property"]))
    return {e: [(inp, prop) for _, inp, prop in sorted(rs, reverse=True)[:count]] for e, rs in runs.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", type=Path)
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--engines", help="comma-separated (default: every engine in the CSV)")
    args = ap.parse_args()
    picks = slowest(args.csv, args.count, args.engines.split(",") if args.engines else None)
    worst: dict[str, float] = {}
    for engine, tasks in picks.items():
        for inp, prop in tasks:
            cmd = [sys.executable, "-m", "looprover", "verify", inp, "--engine", engine, "--timeout",
                   f"{args.timeout:g}", "--json"] + (["--property", prop] if prop != "check-sat" else [])
            t0 = time.monotonic()
            r = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
            wall = time.monotonic() - t0
            try:
                out = json.loads(r.stdout)
                status, reason = out["status"], out["reason"]
            except (json.JSONDecodeError, KeyError):
                status, reason = f"exit {r.returncode}", r.stderr.strip()[-120:]
            over = wall - args.timeout
            worst[engine] = max(worst.get(engine, float("-inf")), over)
            print(f"{engine:11} {wall:6.2f} s  overrun {over:+5.2f} s  {status:7} {Path(inp).name}: {reason[:70]}",
                  flush=True)
    print()
    for engine, over in worst.items():
        print(f"worst overrun {engine:11} {over:+.2f} s over {len(picks[engine])} runs at --timeout {args.timeout:g}")
    print(f"worst overrun overall: {max(worst.values()):+.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
