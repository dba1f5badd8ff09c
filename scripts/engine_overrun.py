#!/usr/bin/env python3
"""How far past its limit does an engine itself run? (issue 14: no solver call or tactic the deadline cannot stop.)

`looprover verify` kills its job's process one second after the limit, so its wall time hides an engine stuck in
z3 (tpa on 20 chained `y += 3u` printed 11 s on a 10 s limit while the engine inside ran over 60 s). This runs
each job in a process of its own *without* that kill, prints the wall time and the verdict, and kills the run
only at `--kill` seconds ("killed" then means it would have run at least that long).

    python scripts/engine_overrun.py FILE... [--engine tpa] [--timeout 10] [--kill 60]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time


def one(path: str, engine: str, timeout: float) -> None:
    """In the run's own process: the job in this process, one JSON line with the outcome."""
    from looprover.deadline import Deadline
    from looprover.jobs import JobOptions, resolve_job, run_job
    t0 = time.monotonic()
    out = run_job(resolve_job(path, None, None), JobOptions(engine=engine), t0, Deadline.after(timeout))
    res = out.json or {"status": "ERROR", "reason": out.error}
    print(json.dumps({"wall": time.monotonic() - t0, "status": res.get("status"), "reason": res.get("reason")}))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--engine", default="tpa")
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--kill", type=float, default=60.0, help="seconds after which a run is killed (default 60)")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        one(args.files[0], args.engine, args.timeout)
        return 0
    for f in args.files:
        cmd = [sys.executable, __file__, "--one", f, "--engine", args.engine, "--timeout", f"{args.timeout:g}"]
        t0 = time.monotonic()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=args.kill)
            line = json.loads(r.stdout.strip().splitlines()[-1]) if r.stdout.strip() else None
        except subprocess.TimeoutExpired:
            line = {"wall": time.monotonic() - t0, "status": "killed", "reason": f"still running at {args.kill:g} s"}
        if line is None:
            line = {"wall": time.monotonic() - t0, "status": f"exit {r.returncode}", "reason": r.stderr.strip()[-120:]}
        over = line["wall"] - args.timeout
        print(f"{line['wall']:7.2f} s  overrun {over:+6.2f} s  {line['status']:8} {f}: {str(line['reason'])[:70]}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
