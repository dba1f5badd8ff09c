"""Index-set instantiation (`smt/instances.py`) and the interpreter's sparse quantifier (`interp._cell_points`):
both stand in for a quantifier, so each is checked against the quantifier itself on seeded random cases."""
import random

import z3

from looprover.program.expr import I32, ArrayType, ForAll, Select, Var, cast, cmp, const
from looprover.program.interp import ArrayValue, Evaluator
from looprover.smt.instances import GrowingInstances, index_terms, instantiate

A = ArrayType(I32, I32)


def _random_array(rng: random.Random) -> ArrayValue:
    return ArrayValue(rng.randint(-2, 2), {rng.randint(-5, 300): rng.randint(-2, 2) for _ in range(rng.randint(0, 6))})


def test_sparse_forall_agrees_with_the_dense_one():
    """Over ranges of up to 300 cells, `ForAll` evaluated at the stored cells plus one gap equals the cell by
    cell evaluation (forced by a range of at most 64, which is evaluated densely)."""
    rng = random.Random(7)
    k, a, b = Var("k", I32), Var("a", A), Var("b", A)
    ev = Evaluator("math")
    bodies = [cmp(">=", Select(a, k, I32), const(0, I32)),
              cmp("==", Select(a, cast(I32, k), I32), Select(b, k, I32)),
              cmp("<=", Select(a, k, I32), Var("x", I32))]
    for _ in range(400):
        s = {"a": _random_array(rng), "b": _random_array(rng), "x": rng.randint(-2, 2)}
        lo, hi = rng.randint(-10, 100), rng.randint(-10, 300)
        body = rng.choice(bodies)
        fast = ev.eval(ForAll(k, const(lo, I32), const(hi, I32), body), s)
        dense = all(ev.eval(body, {**s, "k": j}) for j in range(lo, hi))
        assert fast == dense, (lo, hi, body, s)


def test_a_body_reading_the_variable_elsewhere_is_evaluated_densely():
    k, a = Var("k", I32), Var("a", A)
    s = {"a": ArrayValue(0, {})}
    body = cmp("<", Select(a, k, I32), k)          # k outside the index: every cell counts
    assert not Evaluator("math").eval(ForAll(k, const(0, I32), const(200, I32), body), s)
    assert Evaluator("math").eval(ForAll(k, const(1, I32), const(200, I32), body), s)


def _array_fact(a, lo, hi, c):
    k = z3.Int("k")
    return z3.ForAll([k], z3.Implies(z3.And(lo <= k, k < hi), a[k] >= c))


def test_instantiation_is_implied_and_decides_array_property_queries():
    """A random query over `∀k ∈ [lo, hi): a[k] >= c` assumptions, stores and reads: the instantiated query is
    implied by the quantified one (unsat stays unsat), and on these array-property-fragment queries it has
    the same answer."""
    rng = random.Random(3)
    a, b = z3.Array("a", z3.IntSort(), z3.IntSort()), z3.Array("b", z3.IntSort(), z3.IntSort())
    i, j, n = z3.Ints("i j n")
    answers: dict = {}
    for _ in range(60):
        facts = [_array_fact(rng.choice([a, b]), rng.choice([0, i, j]), rng.choice([i, n, j + 1]), rng.randint(-1, 1))
                 for _ in range(rng.randint(1, 3))]
        b2 = z3.Store(a, i, rng.randint(-1, 1))
        ground = [b == b2, rng.choice([i < n, i >= 0, j == i + 1]),
                  rng.choice([b[j] < 0, a[i] < -1, z3.Or(b[j] < 0, a[n - 1] < 0)])]
        quantified = z3.Solver()
        quantified.add(*facts, *ground)
        inst = z3.Solver()
        terms = index_terms(facts + ground)
        inst.add(*[instantiate(f, terms) for f in facts], *ground)
        want, got = quantified.check(), inst.check()
        assert not z3.is_quantifier(instantiate(facts[0], terms))
        if want != z3.unknown:
            assert got == want, (facts, ground)
            answers[str(want)] = answers.get(str(want), 0) + 1
    assert answers.get("sat", 0) >= 5 and answers.get("unsat", 0) >= 5, answers   # both kinds were asked


def test_growing_instances_reach_the_terms_of_later_steps():
    a = z3.Array("a", z3.IntSort(), z3.IntSort())
    i, n = z3.Ints("i n")
    g = GrowingInstances()
    s = z3.Solver()
    s.add(*g.assume([_array_fact(a, 0, n, 0)]))
    s.add(n > 5)
    s.add(*g.ground([a[3] < 0]))        # a term only the later part has
    s.add(a[3] < 0)
    assert s.check() == z3.unsat


def test_a_consequence_checked_at_one_fresh_cell_is_checked_at_every_cell():
    """`at_cell`: `¬at_cell(f, c)` (c fresh) is satisfiable exactly when `¬f` is, on random And/Or/Implies
    combinations of quantified facts under ground assumptions -- including an Or of two quantified facts, which
    one shared cell could not refute (two different cells fail them) and which therefore stays quantified."""
    from looprover.smt.instances import at_cell
    rng = random.Random(11)
    a, b = z3.Array("a", z3.IntSort(), z3.IntSort()), z3.Array("b", z3.IntSort(), z3.IntSort())
    i, n, p = z3.Int("i"), z3.Int("n"), z3.Bool("p")
    answers: dict = {}
    for round_ in range(80):
        facts = [_array_fact(rng.choice([a, b]), rng.choice([0, i]), rng.choice([i, n]), rng.randint(-1, 1))
                 for _ in range(3)]
        f = rng.choice([z3.And(facts[0], facts[1]), z3.Or(facts[0], facts[1]), z3.Implies(p, facts[0]),
                        z3.And(z3.Or(p, facts[0]), facts[2]), z3.Or(z3.And(facts[0], facts[1]), facts[2])])
        ground = [a[0] == rng.randint(-1, 1), b[1] == rng.randint(-1, 1), a[2] == 1, b[3] == -1,
                  rng.choice([i == 2, i == 4]), rng.choice([n == 3, n == 1])]
        cell = z3.Int(f"cell{round_}")
        want, got = z3.Solver(), z3.Solver()
        want.add(*ground, z3.Not(f))
        got.add(*ground, z3.Not(at_cell(f, cell)))
        w, g = want.check(), got.check()
        if w != z3.unknown and g != z3.unknown:
            assert w == g, f
            answers[str(w)] = answers.get(str(w), 0) + 1
    assert answers.get("sat", 0) >= 5 and answers.get("unsat", 0) >= 5, answers
    two = z3.Or(_array_fact(a, 0, n, 0), _array_fact(b, 0, n, 0))
    assert z3.eq(at_cell(two, z3.Int("c")), two)
