"""Formulas written as text (`smt.text`) read back as the same formulas, whichever printer wrote them."""
from __future__ import annotations

import pytest
import z3

from looprover.smt.text import from_text, to_text

X = z3.BitVec("main::x#1.f", 32)
N = z3.Int("c%40k:2")
B = z3.Bool("g'3")
A = z3.Array("a@1", z3.IntSort(), z3.IntSort())
Q = z3.Int("q")


@pytest.mark.parametrize("f", [
    z3.BoolVal(True), z3.BoolVal(False), X >= -5, z3.ULE(X, 100), z3.And(N * N > 3, z3.Or(B, A[N] == 2)),
    z3.And([z3.And(z3.BitVec(f"v{i}", 8) >= -2, z3.BitVec(f"v{i}", 8) <= 7) for i in range(50)]),
    z3.ForAll([Q], z3.Implies(z3.And(0 <= Q, Q < N), A[Q] >= 0)), z3.Not(B) == (N > 2),
])
def test_a_formula_reads_back_as_itself(f):
    g = from_text(to_text(f))
    s = z3.Solver()
    s.add(g != f)
    assert s.check() == z3.unsat, (f, g)
