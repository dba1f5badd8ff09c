"""Model-based projection and exact QE: the defining properties on random small LIA/LRA formulas (fixed seeds)."""
from __future__ import annotations

import random

import pytest
import z3

from helpers.wrap_chain import M, wrap_states, wrapped_adds
from looprover.deadline import Deadline
from looprover.smt import mbp
from looprover.smt.mbp import QEError, free_constants, implicant, ite_depth, mbp_enumerate, project, qe

X = z3.Ints("x y z")
R = z3.Reals("r s t")
BOOLS = z3.Bools("p q")


def _valid(f: z3.BoolRef) -> bool:
    s = z3.Solver()
    s.set("timeout", 20_000)          # only a safety net: every check here takes milliseconds
    s.add(z3.Not(f))
    r = s.check()
    assert r != z3.unknown, f"validity check gave up: {f}"
    return r == z3.unsat


def _random_atom(rnd: random.Random, vs, real: bool):
    # small enough that the quantified validity checks stay in milliseconds: z3's QE is exponential in
    # divisibility atoms over several variables (measured: random 4-variable `mod` formulas take seconds)
    coeffs = [rnd.randint(-2, 2) for _ in vs]
    lhs = z3.Sum([c * v for c, v in zip(coeffs, vs) if c] or [vs[0] * 0])
    c = rnd.randint(-6, 6)
    kind = rnd.choice(["<=", "<", "==", "!=", "<=", "mod"] if not real else ["<=", "<", "==", "!="])
    if kind == "mod":
        v = rnd.choice(vs)
        return (v + rnd.randint(0, 2) * rnd.choice(vs)) % rnd.randint(2, 3) == rnd.randint(0, 1)
    if kind == "<=":
        return lhs <= c
    if kind == "<":
        return lhs < c
    if kind == "==":
        return lhs == c
    if kind == "!=":
        return lhs != c
    raise AssertionError(kind)


def _random_formula(rnd: random.Random, vs, real: bool, depth: int = 2):
    if depth == 0 or rnd.random() < 0.3:
        atom = _random_atom(rnd, vs, real)
        return atom if rnd.random() < 0.8 else z3.Not(atom)
    op = rnd.choice([z3.And, z3.And, z3.Or])
    return op([_random_formula(rnd, vs, real, depth - 1) for _ in range(rnd.randint(2, 3))])


def _cases(real: bool, n: int, seed: int):
    rnd = random.Random(seed)
    vs = list(R if real else X)
    out = []
    while len(out) < n:
        f = _random_formula(rnd, vs, real)
        s = z3.Solver()
        s.add(f)
        if s.check() != z3.sat:
            continue
        present = free_constants(f)
        if len(present) < 2:
            continue
        elim = rnd.sample(present, rnd.randint(1, len(present) - 1))
        out.append((f, s.model(), elim))
    return out


def _exists(elim, f):
    return z3.Exists(elim, f) if elim else f


@pytest.mark.parametrize("real", [False, True], ids=["lia", "lra"])
def test_project_properties_random(real):
    for f, m, elim in _cases(real, 40, seed=7 if real else 3):
        R_ = project(f, m, eliminate=elim)
        elim_ids = {v.get_id() for v in elim}
        assert not any(c.get_id() in elim_ids for c in free_constants(R_)), (f, elim, R_)
        assert z3.is_true(m.eval(R_, model_completion=True)), (f, m, R_)
        assert _valid(z3.Implies(R_, _exists(elim, f))), (f, elim, R_)


@pytest.mark.parametrize("real", [False, True], ids=["lia", "lra"])
def test_qe_is_exact_random(real):
    for f, _, elim in _cases(real, 25, seed=11 if real else 5):
        E = qe(f, eliminate=elim)
        elim_ids = {v.get_id() for v in elim}
        assert not any(c.get_id() in elim_ids for c in free_constants(E))
        assert _valid(z3.Implies(f, E)), (f, elim, E)                      # ∃elim. f ⇒ E
        assert _valid(z3.Implies(E, _exists(elim, f))), (f, elim, E)      # E ⇒ ∃elim. f


def test_qe_after_the_first_tactic_runs_in_a_child_and_is_exact(monkeypatch):
    """With the in-process tactic made useless (`skip` keeps the quantifier), every answer comes from the
    killable child (`qe`, `qe_rec`, the MBP enumeration) through SMT-LIB text, and is still exact."""
    monkeypatch.setattr(mbp, "QE_FIRST", ("skip", 0.1))
    for f, _, elim in _cases(False, 4, seed=17):
        E = qe(f, eliminate=elim, deadline=Deadline.after(20))
        assert not {c.get_id() for c in elim} & {c.get_id() for c in free_constants(E)}
        assert _valid(E == _exists(elim, f)), (f, elim, E)
    x, y = z3.Ints("x y")
    assert z3.is_true(z3.simplify(mbp.eliminate_quantifiers(z3.ForAll([y], z3.Exists([x], x > y)),
                                                             deadline=Deadline.after(20))))


def test_qe_of_nested_wraps_returns_by_its_deadline():
    """`∃aux. Tr ∧ wrap` of chained `y += 3u`: z3's QSAT with QEL did not stop at its limit (over 60 s on a
    1 s limit at 20 additions). Now the small one is answered exactly, the large one gives up (QEError)."""
    F, keep = wrap_states(20)
    assert _valid(qe(F, keep=keep, deadline=Deadline.after(5)) == (keep[0] == 0))
    F, keep = wrap_states(400)
    with pytest.raises(QEError):
        qe(F, keep=keep, deadline=Deadline.after(0.3))
    with pytest.raises(QEError):
        qe(F, keep=keep, deadline=Deadline(0.0))


def test_implicant_of_nested_wraps_is_ite_free_and_implies_the_formula():
    """Each wrap `If` is resolved by the model once (the conditions become literals); resolving them round by
    round took 17 s at 100 additions."""
    u, v = z3.Ints("u v")
    f = z3.And(u >= 0, u <= M - 1, v == wrapped_adds(u, 100))
    for start in (M - 200, 7):
        s = z3.Solver()
        s.add(f, u == start)
        assert s.check() == z3.sat
        m = s.model()
        lits = implicant(f, m, split_disequalities=True)
        assert all(ite_depth(lit) == 0 for lit in lits)
        assert all(z3.is_true(m.eval(lit, model_completion=True)) for lit in lits)
        assert _valid(z3.Implies(z3.And(lits), f))


def test_implicant_with_a_cache_shared_across_models_is_the_same():
    """`IteCache` keeps which terms hold term-level ites across the calls on one formula (Farkas extracts many
    cubes of one A): with it, every model's implicant is the one computed without it. The formulas mix wrap ites,
    plain ites and disequalities, and temporaries made between the calls reuse the ids of freed terms."""
    from looprover.smt.mbp import IteCache
    u, v, w = z3.Ints("u v w")
    rnd = random.Random(5)
    for n in range(12):
        f = z3.And(u >= -50, u <= 50, v == wrapped_adds(u, 1 + n % 4),
                   z3.Or(w == z3.If(u > rnd.randint(-5, 5), v + 1, u - 2), w != u + rnd.randint(0, 3)))
        cache = IteCache()
        for start in rnd.sample(range(-50, 51), 6):
            s = z3.Solver()
            s.add(f, u == start)
            assert s.check() == z3.sat
            m = s.model()
            junk = [z3.If(u > k, v, w) + k for k in range(20)]     # freed before the next call
            del junk
            with_cache = implicant(f, m, split_disequalities=True, ites=cache)
            plain = implicant(f, m, split_disequalities=True)
            assert [x.sexpr() for x in with_cache] == [x.sexpr() for x in plain]
            assert all(ite_depth(lit) == 0 for lit in with_cache)


def test_ite_depth_counts_nesting_not_number():
    x, y = z3.Ints("x y")
    assert ite_depth(x + 1 > y) == 0
    assert ite_depth(wrapped_adds(x, 12) > 0) == 12
    side_by_side = z3.And([wrapped_adds(z3.Int(f"v{i}"), 1) > 0 for i in range(30)])
    assert ite_depth(side_by_side) == 1
    assert ite_depth(z3.If(x > 0, y, x) > 0) == 1 and ite_depth(z3.If(x > 0, y > 0, x > 0)) == 0


def test_mbp_enumerate_is_exact():
    for f, _, elim in _cases(False, 10, seed=13):
        E = mbp_enumerate(f, eliminate=elim)
        assert E is not None
        assert _valid(E == _exists(elim, f)), (f, elim, E)


def test_project_keep_and_integer_divisibility():
    x, y, k = z3.Ints("x y k")
    f = z3.And(x == 2 * k, y == x + 1)
    s = z3.Solver()
    s.add(f)
    assert s.check() == z3.sat
    m = s.model()
    R_ = project(f, m, keep=[y])
    assert [c.get_id() for c in free_constants(R_)] == [y.get_id()]
    assert _valid(R_ == (y % 2 == 1))      # the projection of this cube is exact: y is odd


def test_project_booleans_and_ite():
    x, y = z3.Ints("x y")
    p = z3.Bool("p")
    f = z3.And(z3.Or(p, x > 3), y == z3.If(p, x + 1, x - 1), y > 0)
    s = z3.Solver()
    s.add(f)
    assert s.check() == z3.sat
    m = s.model()
    R_ = project(f, m, eliminate=[p, x])
    assert z3.is_true(m.eval(R_, model_completion=True))
    assert _valid(z3.Implies(R_, z3.Exists([p, x], f)))


def test_project_completes_partial_models():
    x, y = z3.Ints("x y")
    f = z3.And(x > 0, y > x)
    m = z3.Model()
    m.update_value(y, z3.IntVal(5))           # x undefined: completion picks 0, which violates f
    with pytest.raises(ValueError):
        project(f, m, eliminate=[x])
    m.update_value(x, z3.IntVal(2))
    R_ = project(f, m, eliminate=[x])
    assert _valid(R_ == (y >= 2))


def test_project_rejects_non_model():
    x, y = z3.Ints("x y")
    m = z3.Model()
    m.update_value(x, z3.IntVal(-1))
    m.update_value(y, z3.IntVal(0))
    with pytest.raises(ValueError):
        project(x > 0, m, eliminate=[y])


def test_project_nonlinear_falls_back_to_model_values():
    x, y, z = z3.Ints("x y z")
    f = z3.And(x * y == 6, z == x + y)
    s = z3.Solver()
    s.add(f)
    assert s.check() == z3.sat
    m = s.model()
    R_ = project(f, m, eliminate=[x])
    assert x.get_id() not in {c.get_id() for c in free_constants(R_)}
    assert z3.is_true(m.eval(R_, model_completion=True))
    # R ⇒ ∃x. f, checked on sample points of R (a quantified non-linear validity check is not decidable, and z3
    # answered `unknown` depending on what the context had seen before)
    s = z3.Solver()
    s.set("timeout", 2000)          # non-linear: finding a 5th point of `6 == y*(z - y)` took z3 > 2 s
    s.add(R_)
    for _ in range(3):
        if s.check() != z3.sat:
            break
        pt = s.model()
        point = z3.And(y == pt.eval(y, model_completion=True), z == pt.eval(z, model_completion=True))
        w = z3.Solver()
        w.add(f, point)
        assert w.check() == z3.sat, point
        s.add(z3.Not(point))


def test_argument_errors():
    x, y = z3.Ints("x y")
    m = z3.Model()
    with pytest.raises(ValueError):
        project(x > y, m)
    with pytest.raises(ValueError):
        project(x > y, m, keep=[x], eliminate=[y])
    with pytest.raises(ValueError):
        qe(x > y, eliminate=[x + 1])


def test_qe_keep_and_nothing_to_eliminate():
    x, y = z3.Ints("x y")
    assert _valid(qe(z3.And(x > 0, y == 2 * x), keep=[y]) == z3.And(y > 0, y % 2 == 0))
    assert _valid(qe(x > 0, eliminate=[y]) == (x > 0))


def test_qe_timeout_raises():
    # many variables and disjunctions: no tactic finishes in a millisecond
    vs = z3.Ints(" ".join(f"v{i}" for i in range(12)))
    f = z3.And([z3.Or(vs[i + 1] == vs[i] + 1, vs[i + 1] == 3 * vs[i] - 2, vs[i + 1] % 5 == vs[i] % 3)
                for i in range(11)])
    with pytest.raises(QEError):
        qe(f, keep=[vs[0], vs[-1]], deadline=Deadline.after(0.001))


def test_separate_context():
    ctx = z3.Context()
    x, k = z3.Int("x", ctx), z3.Int("k", ctx)
    f = z3.And(x == 3 * k + 1, k >= 0)
    s = z3.Solver(ctx=ctx)
    s.add(f)
    assert s.check() == z3.sat
    R_ = project(f, s.model(), keep=[x])
    assert R_.ctx == ctx
    E = qe(f, keep=[x])
    assert E.ctx == ctx


def _with_definitions(rnd: random.Random, f: z3.BoolRef, vs: list, bools: list) -> z3.BoolRef:
    """f with definition conjuncts of random variables added: chains (x = y + 1, y = 2z), cycles (x = y, y = x),
    self-references (x = x + 1, never a definition), Boolean ones (p, ¬q, p = (x ≤ 1)), in random order."""
    parts = [f]
    for _ in range(rnd.randint(1, 4)):
        v = rnd.choice(vs)
        t = rnd.randint(-2, 2) * rnd.choice(vs) + rnd.randint(-3, 3)
        parts.append(v == t if rnd.random() < 0.7 else t == v)
    for _ in range(rnd.randint(0, 2)):
        p = rnd.choice(bools)
        parts.append(rnd.choice([p, z3.Not(p), p == (rnd.choice(vs) <= rnd.randint(-2, 2))]))
    rnd.shuffle(parts)
    return z3.And(parts)


def test_eliminate_definitions_is_exact_random():
    """∃elim. F ⇔ ∃rest. F' for the pre-pass of `qe`, and the eliminated variables are gone from F'."""
    rnd = random.Random(27)
    vs, bools = list(X), list(BOOLS)
    eliminated_some = 0
    for _ in range(120):
        f = _with_definitions(rnd, _random_formula(rnd, vs, False), vs, bools)
        present = free_constants(f)
        elim = rnd.sample(present, rnd.randint(1, len(present)))
        g, rest = mbp.eliminate_definitions(f, elim)
        gone = {v.get_id() for v in elim} - {v.get_id() for v in rest}
        assert not any(c.get_id() in gone for c in free_constants(g)), (f, elim, g)
        assert {v.get_id() for v in rest} <= {v.get_id() for v in elim}
        eliminated_some += bool(gone)
        assert _valid(_exists(elim, f) == _exists(rest, g)), (f, elim, g, rest)
    assert eliminated_some > 60          # the generator does exercise the substitution


def test_eliminate_definitions_keeps_cycles_and_self_references():
    x, y, z = X
    g, rest = mbp.eliminate_definitions(z3.And(x == y + 1, y == x - 1, z == z + 1), [x, y, z])
    assert [v.get_id() for v in rest] == [y.get_id(), z.get_id()]      # x = y + 1 went; y = y + 1 - 1 is no definition
    assert _valid(z3.Exists([x, y, z], z3.And(x == y + 1, y == x - 1, z == z + 1)) == _exists(rest, g))
