#!/usr/bin/env python3
"""Frama-C's EVA alarms on a C program against `looprover check`'s verdicts on the same code.

Why: a static analyser such as EVA reports every run-time error it cannot rule out (an *alarm*); the question a
user has is which of them can really happen. This script runs both tools on one program and says, for the alarms
of the kinds both check, how many `check` proves false (its checks at that place and of that kind all `safe`),
how many it shows real (one `violated`, with a replayed counterexample) and how many stay open, with the time per
alarm. Alarms are matched by file, line and kind (EVA gives no column); a line with several alarms of one kind
counts each. A library call's precondition EVA cannot show counts as a memory access there when it is about the
memory the function reads or writes (`valid_dest` of memmove), and Frama-C's `assert` as an assertion. Kinds only
one tool checks (EVA's initialization, pointer comparison, float and downcast alarms, other preconditions such as
tolower's argument range) are listed apart.

    python scripts/alarm_comparison.py --name NAME --files F.c[,G.c] \\
        --eva "frama-c arguments (sources, -machdep, -cpp-extra-args, Eva options)" \\
        --check "looprover check arguments (sources, -D, --data-model, --timeout ...)" [--json OUT]

Frama-C runs as `frama-c ARGS -eva -then -report-csv CSV` (Debian's `frama-c-base` package); looprover as
`looprover check ARGS --json` (with `--only-alarms`, only on the lines of the alarms both check: `--at FILE:LINE`
each, so the time per alarm is the time spent on alarms). `--files` names the source files (base names) whose alarms count: a harness
written for one tool (a `main` calling the library) is no part of the comparison.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

# EVA's alarm kinds (the Report plugin's "property kind" column) -> our check kind
EVA_KINDS = {
    "index_bound": "memory-access",
    "mem_access": "memory-access",
    "dangling_pointer": "memory-access",
    "signed_overflow": "signed-overflow",
    "division_by_zero": "undefined-operation",
    "shift": "undefined-operation",
    "freeable": "free",
}


# every kind of alarm EVA emits (the other properties in its report are specifications: assigns, from, ...)
EVA_ALARMS = {*EVA_KINDS, "unsigned_overflow", "signed_downcast", "unsigned_downcast", "initialization",
              "pointer_value", "ptr_comparison", "differing_blocks", "float_to_int", "is_nan_or_infinite", "is_nan",
              "bool_value", "function_pointer", "separation", "overlap", "valid_string", "valid_wstring",
              "index_bound", "invalid_pointer"}

# A call's precondition that EVA cannot show is an alarm too ("precondition of memmove"). Those on the memory a
# library function reads or writes (`valid_...`) are what our models of these functions check at the call;
# Frama-C's `assert` is a call of __FC_assert, ours an assertion check.
PRECONDITION = "precondition of "
ASSERT_FUNCTION = "__FC_assert"

# statuses of a property EVA did not show: an alarm (Valid..., Dead (unreachable) and Considered valid are not)
ALARM_STATUSES = ("Unknown", "Invalid", "Partially proven")


def our_kind(kind: str, prop: str) -> str | None:
    """The kind of our checks that EVA's alarm (its report's kind and property text) is about, or None."""
    if kind.startswith(PRECONDITION):
        function = kind[len(PRECONDITION):]
        if function == ASSERT_FUNCTION:
            return "assertion"
        return "memory-access" if prop.startswith("valid") else None
    return EVA_KINDS.get(kind)


def run_eva(args: list[str], out: Path) -> float:
    """Run EVA and write its properties to `out` (tab-separated); the wall time."""
    start = time.monotonic()
    proc = subprocess.run(["frama-c", *args, "-eva", "-then", "-report-csv", str(out)],
                          capture_output=True, text=True)
    if proc.returncode != 0 or not out.exists():
        sys.exit(f"frama-c failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return time.monotonic() - start


def eva_alarms(csv_path: Path, files: set[str]) -> list[tuple[str, int, str, str]]:
    """(file, line, EVA kind, property) of each alarm in `files`: one per row of the report, as EVA counts them
    (two calls of tolower on one line are two alarms of the same text)."""
    out = []
    with open(csv_path, newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            kind = row["property kind"]
            if row["status"].startswith(ALARM_STATUSES) and os.path.basename(row["file"]) in files and \
                    (kind in EVA_ALARMS or kind.startswith(PRECONDITION)):
                out.append((os.path.basename(row["file"]), int(row["line"]), kind, row["property"]))
    return out


def run_check(args: list[str]) -> tuple[dict, float]:
    """looprover check's JSON report and its wall time."""
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "looprover", "check", *args, "--json"], capture_output=True,
                          text=True)
    elapsed = time.monotonic() - start
    try:
        return json.loads(proc.stdout), elapsed
    except json.JSONDecodeError:
        sys.exit(f"looprover check failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")


def compare(alarms: list[tuple[str, int, str, str]], checks: list[dict]) -> dict:
    """Per alarm: the status of our checks of its kind at its place (`proved false`, `real`, `open`, or `no
    check` where we instrument nothing of that kind there); and the alarms only EVA raises."""
    ours: dict[tuple[str, int, str], list[str]] = defaultdict(list)
    for c in checks:
        ours[(os.path.basename(c.get("file") or ""), c.get("line") or 0, c["kind"])].append(c["status"])
    outcome: Counter = Counter()
    by_kind: dict[str, Counter] = defaultdict(Counter)
    unmatched_kinds: Counter = Counter()
    for f, line, kind, prop in alarms:
        mine = our_kind(kind, prop)
        if mine is None:
            unmatched_kinds[kind] += 1
            continue
        st = ours.get((f, line, mine))
        if not st:
            res = "no check"
        elif "violated" in st:
            res = "real"
        elif all(s == "safe" for s in st):
            res = "proved false"
        else:
            res = "open"
        outcome[res] += 1
        by_kind[mine][res] += 1
    return {"outcome": dict(outcome), "by_kind": {k: dict(v) for k, v in by_kind.items()},
            "eva_only_kinds": dict(unmatched_kinds)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", required=True)
    ap.add_argument("--files", required=True, help="comma-separated base names of the files whose alarms count")
    ap.add_argument("--eva", required=True, help="frama-c arguments")
    ap.add_argument("--check", required=True, help="looprover check arguments")
    ap.add_argument("--only-alarms", action="store_true",
                    help="check only the lines of EVA's alarms of the kinds both tools check (`check --at`), as "
                         "the LABMC seed checked a static analyser's alarms one by one")
    ap.add_argument("--check-report", help="the JSON of a `check ... --json` run already made with --check's "
                                           "arguments: compare it instead of running check again")
    ap.add_argument("--json", help="write the result here too")
    a = ap.parse_args(argv)
    files = set(a.files.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "eva.csv"
        eva_time = run_eva(shlex.split(a.eva), report)
        alarms = eva_alarms(report, files)
    check_args = shlex.split(a.check)
    if a.only_alarms:
        places = sorted({(f, line) for f, line, kind, prop in alarms if our_kind(kind, prop) is not None})
        check_args += [arg for f, line in places for arg in ("--at", f"{f}:{line}")]
    if a.check_report:
        data = json.loads(Path(a.check_report).read_text())
        check_time = float(data["time"])
    else:
        data, check_time = run_check(check_args)
    checks = [c for c in data.get("checks", []) if os.path.basename(c.get("file") or "") in files]
    result = {"name": a.name, "eva_alarms": len(alarms), "eva_time": round(eva_time, 1),
              "checks": len(checks), "check_statuses": dict(Counter(c["status"] for c in checks)),
              "check_time": round(check_time, 1), **compare(alarms, checks)}
    matched = sum(result["outcome"].values())
    result["check_time_per_alarm"] = round(check_time / matched, 2) if matched else None
    print(json.dumps(result, indent=1))
    if a.json:
        Path(a.json).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
