"""`y += 3u` repeated n times in integer mode, as z3 terms: every step wraps with `If(y + 3 > MAX, y + 3 - 2^32, …)`.

Why a helper: ites nested through arithmetic are what z3's QE (QEL inside QSAT) and z3's projection are
exponential in and do not interrupt (issue 14: tpa on 20 such lines ran 102 s on a 10 s limit); the smt and
tpa tests use the same shape.
"""
from __future__ import annotations

import z3

M = 2 ** 32


def wrapped_adds(start: z3.ArithRef, n: int, step: int = 3) -> z3.ArithRef:
    """`start` after n wrapping additions of `step` (each an `If` over the previous one)."""
    y = start
    for _ in range(n):
        s = y + step
        y = z3.If(s > M - 1, s - M, s)
    return y


def wrap_step(n: int) -> tuple[z3.BoolRef, z3.BoolRef, z3.ArithRef]:
    """(Tr, wrap, pc): one step of `u := nondet; y := u; y += 3u (n times); pc := (y == u + 3n) ? 1 : 2` from
    pc 0 (next-state constants `pc'`, `x'`), and "some addition wraps" as the wrap split builds it
    (smt/nowrap.py). `∃u, pc', x'. Tr ∧ wrap` is exactly `pc == 0`: u near MAX wraps."""
    pc, pc1, u, x1 = z3.Int("pc"), z3.Int("pc'"), z3.Int("u"), z3.Int("x'")
    y, wraps = u, []
    for _ in range(n):
        s = y + 3
        wraps.append(s > M - 1)
        y = z3.If(s > M - 1, s - M, s)
    ok = y == z3.If(u + 3 * n > M - 1, u + 3 * n - M, u + 3 * n)
    trans = z3.And(pc == 0, pc1 == z3.If(ok, 1, 2), x1 == u, u >= 0, u <= M - 1)
    return trans, z3.Or(wraps), pc


def wrap_states(n: int) -> tuple[z3.BoolRef, list[z3.ExprRef]]:
    """(Tr ∧ wrap, [pc]) of `wrap_step`: the QE problem of the wrap split, keeping pc."""
    trans, wrap, pc = wrap_step(n)
    return z3.And(trans, wrap), [pc]
