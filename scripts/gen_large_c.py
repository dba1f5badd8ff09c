#!/usr/bin/env python3
"""Write a large SV-COMP-style C program (a long straight-line `main`) for measuring front-end load time.

    .venv/bin/python scripts/gen_large_c.py N OUT.c [--vars K] [--seed S]

Why: machine-generated SV-COMP tasks can have tens of thousands of statements in one function; loading them
must not take time quadratic in their size. The program has N top-level statements over K int variables:
assignments of expressions or `__VERIFIER_nondet_int()`, if/else blocks, and rare `reach_error()` calls under
a condition. The output is deterministic (a fixed pseudo-random sequence per seed). About 77 bytes per
statement: N = 13,000 gives 1.0 MB, N = 65,000 gives 5.0 MB.
"""
from __future__ import annotations

import argparse
import random
from pathlib import Path

_OPS = ("+", "-", "*", "&", "|", "^")
_CMPS = ("<", ">", "<=", ">=", "==", "!=")


def _operand(rng: random.Random, vs: list[str]) -> str:
    return rng.choice(vs) if rng.random() < 0.6 else str(rng.randint(0, 1000))


def _expr(rng: random.Random, vs: list[str]) -> str:
    e = f"{rng.choice(vs)} {rng.choice(_OPS)} {_operand(rng, vs)}"
    if rng.random() < 0.5:
        e = f"({e}) {rng.choice(_OPS)} {_operand(rng, vs)}"
    return e


def _cond(rng: random.Random, vs: list[str]) -> str:
    c = f"{rng.choice(vs)} {rng.choice(_CMPS)} {_operand(rng, vs)}"
    if rng.random() < 0.5:
        c += f" && {rng.choice(vs)} {rng.choice(_CMPS)} {_operand(rng, vs)}"
    return c


def _assign(rng: random.Random, vs: list[str]) -> str:
    if rng.random() < 0.2:
        return f"{rng.choice(vs)} = __VERIFIER_nondet_int();"
    return f"{rng.choice(vs)} = {_expr(rng, vs)};"


def _statement(rng: random.Random, vs: list[str]) -> str:
    r = rng.random()
    if r < 0.3:
        return _assign(rng, vs)
    if r < 0.98:
        els = f" else {{ {_assign(rng, vs)} {_assign(rng, vs)} }}" if rng.random() < 0.7 else ""
        return f"if ({_cond(rng, vs)}) {{ {_assign(rng, vs)} {_assign(rng, vs)} }}{els}"
    return (f"if ({rng.choice(vs)} == {rng.randint(0, 1000)} && {rng.choice(vs)} == {rng.randint(0, 1000)}) "
            f"{{ reach_error(); }}")


def generate(n: int, k: int = 6, seed: int = 1) -> str:
    rng = random.Random(seed)
    vs = [f"x{i}" for i in range(k)]
    lines = ["extern int __VERIFIER_nondet_int(void);", "extern void reach_error(void);", "",
             "int main(void) {"]
    lines += [f"  int {v} = __VERIFIER_nondet_int();" for v in vs]
    lines += [f"  {_statement(rng, vs)}" for _ in range(n)]
    lines += ["  return 0;", "}", ""]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", type=int, help="number of statements in main")
    ap.add_argument("out", type=Path, help="the C file to write")
    ap.add_argument("--vars", type=int, default=6, help="number of int variables (default 6)")
    ap.add_argument("--seed", type=int, default=1, help="pseudo-random seed (default 1)")
    args = ap.parse_args()
    args.out.write_text(generate(args.n, args.vars, args.seed))


if __name__ == "__main__":
    main()
