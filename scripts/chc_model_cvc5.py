#!/usr/bin/env python3
"""A second opinion on CHC models: cvc5 checks that every clause of a Horn-clause file holds for a model.

    python scripts/chc_model_cvc5.py FILE.smt2 MODEL [FILE.smt2 MODEL ...]

Why: `looprover validate` checks a model with z3, the solver our engines use. This script hands the same
question to a solver we did not write and do not use, so a model it confirms does not rest on z3: the file's
commands are replayed with the predicates' `declare-fun`s replaced by the model's `define-fun`s, and each
`(assert C)` becomes `(push) (assert (not C)) (check-sat) (pop)`, which must be unsat. The model may be ours
(`verify --witness`) or any solver's in the same form (Golem's `--print-witness`, Spacer's). Needs the `cvc5`
Python package (`pip install cvc5`), which looprover itself does not depend on.

Prints one line per pair: `confirmed`, `rejected: clause K is violated` or `unknown: ...`; exit 0.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

_TOKEN = re.compile(r'\(|\)|\|[^|]*\||"(?:[^"]|"")*"|;[^\n]*|[^\s()|";]+')


def commands(text: str) -> list[str]:
    """The top-level S-expressions of SMT-LIB text, as text (comments dropped)."""
    out, depth, start = [], 0, None
    for m in _TOKEN.finditer(text):
        t = m.group()
        if t.startswith(";"):
            continue
        if t == "(":
            if depth == 0:
                start = m.start()
            depth += 1
        elif t == ")":
            depth -= 1
            if depth == 0:
                out.append(text[start:m.end()])
        elif depth == 0 and t not in ("sat", "unsat"):
            raise ValueError(f"unexpected {t!r} at the top level")
    if depth:
        raise ValueError("unbalanced parentheses")
    return out


def head(cmd: str) -> tuple[str, str | None]:
    """(command name, its first argument) of one command."""
    parts = [m.group() for m in _TOKEN.finditer(cmd)][1:3]
    name = parts[0] if parts else ""
    arg = parts[1] if len(parts) > 1 and parts[1] not in "()" else None
    return name, arg.strip("|") if arg else None


def check_script(clauses: str, model: str) -> tuple[str, int]:
    """The cvc5 script for a file and a model, and the number of clauses it checks."""
    defs = [c for c in commands(model) if head(c)[0] == "define-fun"]
    if not defs:                     # the model's own list: ( (define-fun ...) ... )
        body = commands(model)
        defs = [c for b in body for c in commands(b[1:-1]) if head(c)[0] == "define-fun"]
    defined = {head(d)[1] for d in defs}
    lines, n = ["(set-logic ALL)"], 0
    for c in commands(clauses):
        name, arg = head(c)
        if name in ("set-logic", "check-sat", "exit", "get-model", "set-info", "set-option"):
            continue
        if name == "declare-fun" and arg in defined:
            continue
        if name == "assert":
            n += 1
            inner = c[c.index("assert") + len("assert"):c.rindex(")")].strip()
            lines += ["(push 1)", f"(assert (not {inner}))", "(check-sat)", "(pop 1)"]
            continue
        lines.append(c)
    # definitions first, after the sorts and other declarations they may use
    first_assert = next((i for i, line in enumerate(lines) if line == "(push 1)"), len(lines))
    lines[first_assert:first_assert] = defs
    return "\n".join(lines) + "\n", n


def check(clauses: Path, model: Path) -> str:
    import cvc5
    script, n = check_script(clauses.read_text(), model.read_text())
    solver = cvc5.Solver()
    solver.setOption("incremental", "true")
    solver.setOption("tlimit-per", "20000")
    sm = cvc5.SymbolManager(solver)
    parser = cvc5.InputParser(solver, sm)
    parser.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, script, "check")
    k = 0
    while True:
        cmd = parser.nextCommand()
        if cmd.isNull():
            break
        out = cmd.invoke(solver, sm).strip()
        if out in ("sat", "unsat", "unknown"):
            k += 1
            if out == "sat":
                return f"rejected: clause {k} is violated"
            if out == "unknown":
                return f"unknown: cvc5 does not decide clause {k}"
    return "confirmed" if k == n else f"unknown: {k} of {n} clauses checked"


def main(argv: list[str]) -> int:
    if len(argv) < 2 or len(argv) % 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    try:
        import cvc5  # noqa: F401
    except ImportError:
        print("error: needs the cvc5 Python package (pip install cvc5)", file=sys.stderr)
        return 1
    for f, m in zip(argv[::2], argv[1::2]):
        try:
            print(f"{f}: {check(Path(f), Path(m))}")
        except Exception as exc:  # noqa: BLE001 -- one line per pair, never a traceback
            print(f"{f}: unknown: {type(exc).__name__}: {exc}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
