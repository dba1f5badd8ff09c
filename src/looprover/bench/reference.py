"""Reference CHC solvers for `looprover bench`: z3's Spacer, run from Python on an SMT-LIB2 Horn file, and Golem
(an installed binary: `LOOPROVER_GOLEM` names it, else `golem` on the PATH), one of its engines per name.

Why a command that prints what `looprover verify --json` prints: the bench runner then treats a reference
run exactly like an engine run (its own process group, killed at the timeout, the same `--memory` limit,
CPU time from wait4, the same scoring), so our engines and Spacer are compared on the same files in the
same run. `sat` = the clauses have a model = safe = TRUE; `unsat` = FALSE; anything else is UNKNOWN with
z3's reason. A reference solver's answer is taken as it is (no model or counterexample is checked): it is a
yardstick. Golem runs as a child of this command, so its wall time includes this command's start (about 0.1 s);
the JSON's `time` is Golem's own.

    python -m looprover.bench.reference FILE --solver NAME --timeout S [--memory MB] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from looprover.errors import InputError
from looprover.report import CHC_ANSWERS
from looprover.verdict import Status

# name -> parameters of z3's HORN solver (Spacer is its default engine)
REFERENCE_SOLVERS: dict[str, dict[str, object]] = {
    "z3-spacer": {},
    "z3-spacer-global": {"fp.spacer.global": True},     # global guidance (Krishnan et al., CAV 2020)
}
# name -> Golem's `--engine` (Golem's own default is spacer)
GOLEM_ENGINES: dict[str, str] = {
    "golem": "spacer",
    "golem-split-tpa": "split-tpa",
    "golem-tpa": "tpa",
}
REFERENCE_NAMES = sorted([*REFERENCE_SOLVERS, *GOLEM_ENGINES])
ONLY_HORN = "reference solver only reads SMT-LIB2 Horn files"
GOLEM_ANSWERS = {"sat": "TRUE", "unsat": "FALSE"}


def golem_binary() -> str | None:
    """The Golem executable: `LOOPROVER_GOLEM`, else `golem` on the PATH."""
    return os.environ.get("LOOPROVER_GOLEM") or shutil.which("golem")


def solve_golem(path: Path, solver: str, timeout: float) -> tuple[str, str, dict]:
    """(status, reason, stats) of Golem's engine for `solver` on the Horn file `path` within `timeout` seconds."""
    exe = golem_binary()
    if exe is None:
        return "UNKNOWN", "golem not found: set LOOPROVER_GOLEM or put golem on the PATH", {}
    cmd = [exe, "--engine", GOLEM_ENGINES[solver], str(path)]
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return "UNKNOWN", "golem: timeout", {"golem_time": round(time.monotonic() - start, 3)}
    stats = {"golem_time": round(time.monotonic() - start, 3), "command": cmd}
    lines = proc.stdout.split()
    answer = lines[0] if lines else ""
    if answer in GOLEM_ANSWERS:
        return GOLEM_ANSWERS[answer], f"golem {GOLEM_ENGINES[solver]}: {answer}", stats
    why = (proc.stdout.strip() or proc.stderr.strip() or f"exit code {proc.returncode}").splitlines()[-1][:300]
    return "UNKNOWN", f"golem {GOLEM_ENGINES[solver]}: {why}", stats


def solve(path: Path, solver: str, timeout: float) -> tuple[str, str, dict]:
    """(status, reason, stats) of `solver` on the Horn file `path` within `timeout` seconds."""
    import z3

    start = time.monotonic()
    stats: dict = {"z3_version": z3.get_version_string(), "params": dict(REFERENCE_SOLVERS[solver])}
    try:
        s = z3.SolverFor("HORN")
        for name, value in REFERENCE_SOLVERS[solver].items():
            s.set(name, value)         # checked by z3 (an unknown name is an error), unlike set_param
        s.from_file(str(path))
        remaining = max(timeout - (time.monotonic() - start), 0.001)
        s.set("timeout", max(int(remaining * 1000), 1))
        answer = s.check()
        z3_stats = s.statistics()
        stats["z3"] = {k: z3_stats.get_key_value(k) for k in z3_stats.keys()}
    except z3.Z3Exception as exc:
        msg = exc.value.decode(errors="replace") if isinstance(exc.value, bytes) else str(exc.value)
        return "UNKNOWN", f"z3 error: {msg.strip()[:300]}", stats
    except MemoryError:
        return "UNKNOWN", "out of memory", stats
    if answer == z3.sat:
        return "TRUE", "z3 Spacer: sat (the clauses have a model)", stats
    if answer == z3.unsat:
        return "FALSE", "z3 Spacer: unsat (a counterexample derivation exists)", stats
    return "UNKNOWN", f"z3 Spacer: {s.reason_unknown() or 'unknown'}", stats


def run(file: str, solver: str, timeout: float) -> dict:
    """The result object of `looprover verify --json` for one reference run. InputError for a missing file."""
    from looprover.jobs import resolve_job

    start = time.monotonic()
    job = resolve_job(file, None, None)           # a .yml task names its input file and expected verdict
    if not job.input.is_file():
        raise InputError(f"{job.input}: no such file")
    if not job.input.read_bytes().strip():
        raise InputError(f"{job.input}: empty file")     # z3 would call an empty clause set sat
    if job.input.suffix != ".smt2":
        status, reason, stats = "UNKNOWN", ONLY_HORN, {}
    elif solver in GOLEM_ENGINES:
        status, reason, stats = solve_golem(job.input, solver, timeout)
    else:
        status, reason, stats = solve(job.input, solver, timeout)
    return {
        "status": status, "result": status,      # Horn clauses have no SV-COMP property: FALSE, not FALSE(p)
        "chc_answer": CHC_ANSWERS[Status(status)] if job.is_chc else None,
        "engine": solver, "reason": reason, "time": round(time.monotonic() - start, 3),
        "file": str(job.input), "task": str(job.task) if job.task else None, "property": job.property.name,
        "data_model": job.data_model, "expected": job.expected, "counterexample": None, "stats": stats,
    }


def main(argv: list[str] | None = None) -> int:
    from looprover.argtypes import positive_float, positive_int
    from looprover.processes import set_memory_limit
    from looprover.report import print_error

    p = argparse.ArgumentParser(prog="python -m looprover.bench.reference",
                                description="Run a reference CHC solver on an SMT-LIB2 Horn file "
                                            "(sat = TRUE, unsat = FALSE).")
    p.add_argument("file", metavar="FILE", help="a .smt2 Horn-clause file (or a .yml task naming one)")
    p.add_argument("--solver", choices=REFERENCE_NAMES, default="z3-spacer")
    p.add_argument("--timeout", type=positive_float, default=60.0, metavar="S")
    p.add_argument("--memory", type=positive_int, default=None, metavar="MB",
                   help="address-space limit (RLIMIT_AS)")
    p.add_argument("--json", action="store_true", help="print one JSON object (as `looprover verify --json`)")
    args = p.parse_args(argv)
    try:
        set_memory_limit(args.memory)
        out = run(args.file, args.solver, args.timeout)
    except InputError as exc:
        print_error(str(exc), args.json, file=args.file)
        return 1                    # the exit codes of `looprover verify`: 1 = input error
    if args.json:
        print(json.dumps(out))
    else:
        print(out["chc_answer"] or out["result"])
        print(f"  engine:   {out['engine']}")
        print(f"  reason:   {out['reason']}")
        print(f"  time:     {out['time']:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
