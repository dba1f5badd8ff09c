"""`smt/divmod.py`: div and mod by constants as auxiliary quotient and remainder, an equivalent formula."""
from __future__ import annotations

import random

import z3

from looprover.smt.divmod import purify_divmod
from looprover.smt.terms import subterms


def _random_term(rng: random.Random, xs: list[z3.ArithRef], depth: int) -> z3.ArithRef:
    if depth == 0 or rng.random() < 0.3:
        return rng.choice(xs) if rng.random() < 0.7 else z3.IntVal(rng.randint(-5, 5))
    a = _random_term(rng, xs, depth - 1)
    kind = rng.randrange(4)
    if kind == 0:
        return a + _random_term(rng, xs, depth - 1)
    if kind == 1:
        return a * rng.choice([-2, 3])
    c = rng.choice([-7, -3, -2, 2, 3, 5, 50])
    return a / c if kind == 2 else a % c          # z3's `/` on Int is `div`


def _random_formula(rng: random.Random, xs: list[z3.ArithRef]) -> z3.BoolRef:
    atoms = []
    for _ in range(rng.randint(1, 3)):
        a, b = _random_term(rng, xs, 3), _random_term(rng, xs, 2)
        atoms.append(rng.choice([a <= b, a == b, a > b]))
    return rng.choice([z3.And, z3.Or])(*atoms) if len(atoms) > 1 else atoms[0]


def test_purified_formula_is_equivalent_with_its_fresh_variables_existential():
    """f(v) ⇔ ∃q,r. purified(v, q, r) at random points v, on random formulas with nested div/mod by positive and
    negative constants (SMT-LIB's Euclidean division in both); at a point both sides are decided at once."""
    rng = random.Random(7)
    xs = list(z3.Ints("x y z"))
    points = 0
    for _ in range(150):
        f = _random_formula(rng, xs)
        g, fresh = purify_divmod(f)
        has = any(z3.is_app_of(t, k) for t in subterms(f) for k in (z3.Z3_OP_IDIV, z3.Z3_OP_MOD))
        assert bool(fresh) == has
        if not fresh:
            assert g.eq(f)
            continue
        assert not any(z3.is_app_of(t, k) for t in subterms(g) for k in (z3.Z3_OP_IDIV, z3.Z3_OP_MOD))
        for _ in range(8):
            at = [(x, z3.IntVal(rng.randint(-120, 120))) for x in xs]
            truth = z3.is_true(z3.simplify(z3.substitute(f, *at)))
            s = z3.Solver()
            s.add(z3.substitute(g, *at))
            assert s.check() == (z3.sat if truth else z3.unsat), (f, g, at)
            points += 1
    assert points > 400


def test_one_quotient_per_dividend_and_divisor():
    x = z3.Int("x")
    g, fresh = purify_divmod(z3.And(x / 4 >= 1, x % 4 == 1, x / 4 <= 3))
    assert len(fresh) == 2


def test_quantified_formulas_are_left_alone():
    x, k = z3.Ints("x k")
    f = z3.ForAll([k], z3.Implies(k % 2 == 0, x != k))
    assert purify_divmod(f) == (f, [])

