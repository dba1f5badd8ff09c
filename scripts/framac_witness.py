#!/usr/bin/env python3
"""A second opinion on our correctness witnesses from a tool chain we did not write: Frama-C's WP plug-in.

    python scripts/framac_witness.py BENCH.csv WITNESS_DIR [--timeout 120] [--prover cvc4,z3] [--filter SUBSTR]
    python scripts/framac_witness.py --one FILE.c WITNESS.yml [--data-model ILP32]

For every correctness witness of unreach-call and no-overflow (format 2.0 `loop_invariant`s, in C or, for
quantified invariants over arrays, already in ACSL) that a
`bench --witnesses WITNESS_DIR` run wrote
(the CSV names the tasks), the C file is copied with each invariant as an ACSL `loop invariant` just before its
loop's keyword, `reach_error` gets the contract `requires \\false` (so every call of it must be unreachable),
`abort` never returns, `__VERIFIER_assume(c)` ensures c, and every function defined in the file is inlined into
`main` (`-inline-calls`); then `frama-c -wp -wp-fct main` (with `-wp-rte` for no-overflow: no signed arithmetic
overflows) must prove every goal: the invariants are established
and preserved (with no `loop assigns`, WP havocs every variable at the loop head, so the invariants must be
inductive on their own -- what our `validate` checks) and no call of `reach_error` is reachable. Confirmed: all
goals proved; otherwise the first unproved goal is named. ACSL reads the invariants' arithmetic over the
mathematical integers, C's own arithmetic in the program is modelled by WP's default (unsigned wraps, signed
overflow assumed absent, as in our integer encoding).

A measurement tool, not a dependency: it needs `frama-c` (Debian `frama-c-base`), `why3` and a prover binary
(`cvc4`, `z3`), configured with `why3 config detect`.
"""
from __future__ import annotations

import argparse
import collections
import csv
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

MACHDEP = {"ILP32": "x86_32", "LP64": "x86_64"}
PROPERTIES = ("unreach-call", "no-overflow")     # termination's 2.1 witnesses are not ACSL loop invariants
UNREACHABLE = "/*@ requires \\false; assigns \\nothing; */ void reach_error();\n"    # unreach-call only
PRELUDE = ("/*@ assigns \\nothing; ensures \\false; */ void abort(void);\n"
           "/*@ assigns \\nothing; ensures \\old(cond) != 0; */ void __VERIFIER_assume(int cond);\n")


def annotated(source: str, witness: list, overflow: bool = False) -> tuple[str, int]:
    """The C text with the witness's loop invariants as ACSL before their loops, and the number of them; for a
    no-overflow witness (`overflow`) a call of `reach_error` is no violation."""
    at: dict[tuple[int, int], list[str]] = collections.defaultdict(list)
    for entry in witness:
        for item in entry.get("content") or []:
            inv = item.get("invariant") or {}
            if inv.get("type") == "loop_invariant":
                loc = inv["location"]
                at[(loc["line"], loc.get("column") or 1)].append(str(inv["value"]))
    lines = source.splitlines(keepends=True)
    for (line, col) in sorted(at, reverse=True):
        text = lines[line - 1]
        acsl = "/*@ " + " ".join(f"loop invariant {v};" for v in at[(line, col)]) + " */ "
        lines[line - 1] = text[:col - 1] + acsl + text[col - 1:]
    return ("" if overflow else UNREACHABLE) + PRELUDE + "".join(lines), sum(map(len, at.values()))


def defined_functions(path: Path, data_model: str) -> list[str]:
    from looprover.witness.csource import CSource
    return [name for name, _, _ in CSource(path, data_model).functions if name not in ("main", "reach_error")]


def frama_c(path: Path, witness: Path, data_model: str, timeout: float, provers: str, overflow: bool = False
            ) -> str:
    """`confirmed` or why not. `overflow` (no-overflow witnesses): WP must also prove that no signed arithmetic
    overflows (`-wp-rte`, Frama-C's run-time-error guards)."""
    entries = yaml.safe_load(witness.read_text())
    text, count = annotated(path.read_text(errors="replace"), entries, overflow)
    if not count:
        return "no loop invariants in the witness"
    inline = defined_functions(path, data_model)
    with tempfile.TemporaryDirectory(prefix="looprover-framac-") as tmp:
        copy = Path(tmp, path.name if path.suffix == ".c" else path.stem + ".i")
        copy.write_text(text)
        # `alloca_bounds`: Frama-C's own check that a variable-length array's size is valid, a run-time check of
        # the program that neither unreach-call nor the witness speaks of
        cmd = ["frama-c", "-wp", "-wp-fct", "main", *(["-wp-rte"] if overflow else []), "-wp-prover", provers,
               "-wp-prop=-alloca_bounds",
               "-wp-timeout", "10",
               "-machdep", MACHDEP.get(data_model, "x86_32"), *(["-inline-calls", ",".join(inline)] if inline else []),
               str(copy)]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=tmp)
        except subprocess.TimeoutExpired:
            return f"frama-c did not finish in {timeout:g} s"
    out = r.stdout + r.stderr
    m = re.search(r"Proved goals:\s*(\d+)\s*/\s*(\d+)", out)
    if m is None:
        err = next((ln for ln in out.splitlines() if "error" in ln.lower()), out.strip()[-200:])
        return f"frama-c failed: {err[:200]}"
    proved, total = int(m.group(1)), int(m.group(2))
    if proved == total:
        return "confirmed"
    failed = re.findall(r"\[(?:Failed|Timeout|Unknown)\] Goal (\S+)", out) or re.findall(r"Goal (\S+) : (?!Valid)", out)
    return f"{proved} of {total} goals proved; first not proved: {failed[0] if failed else '?'}"


def _witness_file(directory: Path, row: dict) -> Path:
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{row['task']}.{row['property']}.{row['solver']}")
    return directory / f"{name}.witness.yml"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="?")
    ap.add_argument("witnesses", nargs="?")
    ap.add_argument("--one", nargs=2, metavar=("FILE", "WITNESS"))
    ap.add_argument("--data-model", default="ILP32")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--prover", default="cvc4,z3")
    ap.add_argument("--filter", default="")
    args = ap.parse_args()
    if shutil.which("frama-c") is None:
        print("frama-c is not installed (Debian: frama-c-base, why3, cvc4)", file=sys.stderr)
        return 2
    if args.one:
        print(frama_c(Path(args.one[0]), Path(args.one[1]), args.data_model, args.timeout, args.prover))
        return 0
    if not args.csv or not args.witnesses:
        ap.error("BENCH.csv and WITNESS_DIR, or --one FILE WITNESS")
    rows = [r for r in csv.DictReader(open(args.csv)) if r.get("witness") == "correctness"
            and r["property"] in PROPERTIES and args.filter in r["task"]]
    counts: collections.Counter = collections.Counter()
    for row in rows:
        w = _witness_file(Path(args.witnesses), row)
        ours = row.get("witness_check", "")
        if not w.exists():
            continue
        verdict = frama_c(Path(row["input"]), w, _data_model(row), args.timeout, args.prover,
                          overflow=row["property"] == "no-overflow")
        counts[("confirmed" if verdict == "confirmed" else "not confirmed", ours == "confirmed")] += 1
        print(f"{row['task']} ({row['property']}): frama-c {verdict}; looprover validate: {ours or '-'}", flush=True)
    total = sum(counts.values())
    both = counts[("confirmed", True)]
    ours = sum(v for (_, o), v in counts.items() if o)
    print(f"Frama-C WP confirms {both + counts[('confirmed', False)]} of {total} correctness witnesses "
          f"({both} of the {ours} that looprover validate confirms)")
    return 0


def _data_model(row: dict) -> str:
    task = Path(row["input"]).with_suffix(".yml")
    if task.exists():
        m = re.search(r"data_model:\s*(\w+)", task.read_text())
        if m:
            return m.group(1)
    return "ILP32"


if __name__ == "__main__":
    sys.exit(main())
