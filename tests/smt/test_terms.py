"""`smt/terms.py`: the builders make the terms z3's own constructors make (they call its C API directly) and
raise where those raise; the clause split TPA may apply to learned lemmas must give an equivalent set of facts."""
from __future__ import annotations

import random

import pytest
import z3

from looprover.smt.terms import (FALSE, TRUE, clauses, dag_size, mk_and, mk_ite, mk_not, mk_or, subterms,
                                  uninterpreted_apps)

a, b, c, d, e = z3.Bools("a b c d e")
x, y = z3.Ints("x y")


def _equivalent(f: z3.BoolRef, parts: list[z3.BoolRef]) -> bool:
    s = z3.Solver()
    s.add(z3.Not(f == z3.And(parts) if parts else f))
    return s.check() == z3.unsat


def test_builders_make_the_terms_z3_makes():
    r = z3.Real("r")
    assert mk_and(a, b, x > 0).eq(z3.And(a, b, x > 0)) and isinstance(mk_and(a, b), z3.BoolRef)
    assert mk_or(a, b, c).eq(z3.Or(a, b, c)) and mk_not(a).eq(z3.Not(a))
    assert mk_ite(a, x, y + 1).eq(z3.If(a, x, y + 1)) and isinstance(mk_ite(a, x, y), z3.ArithRef)
    assert mk_ite(a, x, r).eq(z3.If(a, x, r))                       # Int and Real: coerced, as z3.If does
    assert mk_ite(a, b, c).eq(z3.If(a, b, c)) and isinstance(mk_ite(a, b, c), z3.BoolRef)
    arr = z3.Array("arr", z3.IntSort(), z3.IntSort())
    assert isinstance(mk_ite(a, arr, z3.Store(arr, 0, 1)), z3.ArrayRef)
    assert mk_and(a, TRUE, b).eq(z3.And(a, b)) and mk_and(a, FALSE).eq(FALSE) and mk_or(TRUE, a).eq(TRUE)
    assert mk_not(TRUE).eq(FALSE) and mk_ite(TRUE, x, y).eq(x) and mk_ite(a, x, x).eq(x)


def test_builders_raise_where_z3_raises():
    other = z3.Context()
    b2 = z3.Bool("b", other)
    for bad in (lambda: mk_and(a, x), lambda: mk_or(a, x), lambda: mk_and(a, b2), lambda: mk_or(b2, a),
                lambda: mk_ite(a, x, z3.Int("y", other))):
        with pytest.raises(z3.Z3Exception):
            bad()


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


def test_uninterpreted_apps_are_each_application_once_quantifier_bodies_included():
    f = z3.Function("f", z3.IntSort(), z3.IntSort())
    p = z3.Function("p", z3.IntSort(), z3.BoolSort())
    q = z3.Int("q")
    t = z3.And(p(f(x) + y), f(x) > 0, z3.ForAll([q], z3.Implies(p(q), q > x)), a)
    got = sorted(str(u) for u in uninterpreted_apps(t))
    assert got == sorted(["p(f(x) + y)", "f(x)", "x", "y", "p(Var(0))", "a"]), got
    assert [str(u) for u in uninterpreted_apps(x + 1 > 2 * y)] in (["x", "y"], ["y", "x"])
    assert list(uninterpreted_apps(z3.IntVal(3) > 2)) == []


def test_dag_size_and_subterms_count_each_distinct_term_once():
    q = z3.Int("q")
    shared = x + y
    f = z3.And(shared <= 3, shared >= z3.IntVal(-3), z3.ForAll([q], q + x > 0))
    terms = list(subterms(f))
    assert terms[0].eq(f) and len({t.get_id() for t in terms}) == len(terms)
    # f, the two atoms, x + y, x, y, 3, -3, the quantifier (not entered)
    assert dag_size(f) == len(terms) == 9
    assert dag_size(x) == 1
