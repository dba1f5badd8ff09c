"""`smt/terms.py`: the clause split TPA may apply to learned lemmas must give an equivalent set of facts."""
from __future__ import annotations

import random

import z3

from looprover.smt.terms import clauses

a, b, c, d, e = z3.Bools("a b c d e")
x, y = z3.Ints("x y")


def _equivalent(f: z3.BoolRef, parts: list[z3.BoolRef]) -> bool:
    s = z3.Solver()
    s.add(z3.Not(f == z3.And(parts) if parts else f))
    return s.check() == z3.unsat


def test_distributes_a_disjunction_of_conjunctions():
    f = z3.Or(a, z3.And(b, c))
    parts = clauses(f, 16)
    assert len(parts) == 2 and _equivalent(f, parts)
    assert all(z3.is_or(p) for p in parts)


def test_keeps_a_disjunction_past_the_limit():
    f = z3.Or(z3.And(a, b, c), z3.And(d, e, x > 0), z3.And(y > 0, x < 5, a))     # 27 clauses
    assert clauses(f, 16) == [f]
    assert len(clauses(f, 27)) == 27


def test_random_formulas_stay_equivalent():
    """Property: for random conjunctions of disjunctions of conjunctions of atoms, the clauses are equivalent
    to the formula, whatever the limit."""
    rng = random.Random(7)
    atoms = [a, b, c, d, e, x > 0, x < y, y == 3]
    for _ in range(60):
        conj = []
        for _ in range(rng.randint(1, 3)):
            disj = [z3.And(rng.sample(atoms, rng.randint(1, 3))) for _ in range(rng.randint(1, 3))]
            conj.append(z3.Or(disj) if len(disj) > 1 else disj[0])
        f = z3.And(conj) if len(conj) > 1 else conj[0]
        for limit in (1, 4, 64):
            assert _equivalent(f, clauses(f, limit)), (f, limit)
