"""The z3 encoder against the concrete interpreter, operator by operator, in both semantics."""
import random

import pytest
import z3

from looprover.errors import UnsupportedError
from looprover.program.cpg import build_cpg
from looprover.program.expr import (
    BOOL, I8, I16, I32, I64, MATH_INT, U8, U16, U32, U64, ArrayType, Binary, Cast, IntConst, Select, Unary,
    Var, cmp, const,
)
from looprover.program.interp import Evaluator, UndefinedBehavior
from looprover.smt.cpg_system import CPGSystem
from looprover.smt.dag import DagSpec, encode_dag
from looprover.smt.encode import Encoder

from helpers.progdsl import Prog, add, c, eq, ne

TYPES = [I8, U8, I16, U16, I32, U32, I64, U64, MATH_INT]
OPS = ["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"]


def _values(rng: random.Random, t, n: int) -> list[int]:
    if not t.bounded:
        pool = [0, 1, -1, 7, -7, 2**40, -(2**40)]
        return pool + [rng.randint(-2**70, 2**70) for _ in range(n)] + [rng.randint(-20, 20) for _ in range(n)]
    pool = [0, 1, t.max, t.min, t.max - 1, t.min + 1, 3, t.wrap(-3)]
    return pool + [rng.randint(t.min, t.max) for _ in range(n)] + [t.wrap(rng.randint(-20, 20)) for _ in range(n)]


def _check_exprs(exprs_with_env, bitvector: bool, literal: bool = False):
    """Encode each (expr, {var: value}) symbolically (values fixed by equations, so no constant folding),
    or with `literal` values (exercising the encoder's constant folding), and compare with the interpreter."""
    enc = Encoder(bitvector=bitvector)
    ev = Evaluator("wrap" if bitvector else "math")
    s = z3.Solver()
    checks = []
    for n, (e, vals) in enumerate(exprs_with_env):
        ev.overflowed = False
        try:
            expected = ev.eval(e, {v.name: x for v, x in vals.items()})
        except UndefinedBehavior:
            continue
        if ev.overflowed and not bitvector and e.type.bounded and not e.type.contains(expected):
            pass  # integer mode keeps the mathematical value, like Evaluator("math")
        env = {}
        for v, x in vals.items():
            if literal:
                env[v.name] = enc.value(x, v.type)
                continue
            k = z3.Const(f"{v.name}_{n}", enc.sort(v.type))
            s.add(k == enc.value(x, v.type))
            env[v.name] = k
        try:
            checks.append((e, vals, expected, enc.expr(e, env)))
        except UnsupportedError:
            continue
    assert s.check() == z3.sat
    m = s.model()
    for e, vals, expected, term in checks:
        got = enc.to_python(m.eval(term, model_completion=True), e.type)
        assert got == expected, f"{e} with {vals}: encoder {got}, interpreter {expected}"
    return len(checks)


@pytest.mark.parametrize("literal", [False, True], ids=["symbolic", "folded"])
@pytest.mark.parametrize("bitvector", [False, True], ids=["int", "bv"])
@pytest.mark.parametrize("op", OPS)
def test_binary_operators_match_interpreter(op, bitvector, literal):
    rng = random.Random(hash((op, bitvector)) & 0xFFFF)
    cases = []
    for t in TYPES:
        a, b = Var("a", t), Var("b", t)
        e = Binary(op, a, b, t)
        xs, ys = _values(rng, t, 3), _values(rng, t, 3)
        if op in ("<<", ">>"):
            ys = list(range(0, t.bits, max(1, t.bits // 7))) + [t.bits - 1] if t.bounded else [0, 1, 5, 40]
            if op == "<<" and t.signed:
                xs = [x for x in xs if x >= 0]
        for x in xs:
            for y in rng.sample(ys, min(len(ys), 4)):
                cases.append((e, {a: x, b: y}))
        # the same operator with a constant operand takes other encoding paths (masks, constant shifts)
        for y in ys[:8]:
            cases.append((Binary(op, a, IntConst(y, t), t), {a: rng.choice(xs)}))
            cases.append((Binary(op, IntConst(rng.choice(xs), t), b, t), {b: y}))
    for t in (I32, U32, I64, U8):  # masks and constant shifts of special shapes
        a = Var("a", t)
        for k in ((1 << 4) - 1, 1, t.max, t.wrap(-16), t.wrap(-1), 0):
            for x in _values(rng, t, 4):
                cases.append((Binary(op, a, IntConst(t.wrap(k), t), t), {a: x}))
    assert _check_exprs(cases, bitvector, literal) > 100


@pytest.mark.parametrize("bitvector", [False, True], ids=["int", "bv"])
def test_unary_casts_compares_match_interpreter(bitvector):
    rng = random.Random(7)
    cases = []
    for t in TYPES:
        a, b = Var("a", t), Var("b", t)
        for x in _values(rng, t, 8):
            for op in ("-", "~"):
                if op == "~" and not t.bounded:
                    continue
                cases.append((Unary(op, a, t), {a: x}))
            for u in TYPES + [BOOL]:
                cases.append((Cast(u, a), {a: x}))
            for op in ("==", "!=", "<", "<=", ">", ">="):
                cases.append((cmp(op, a, b), {a: x, b: rng.choice(_values(rng, t, 2))}))
    bo = Var("p", BOOL)
    for t in (I8, U32):
        cases.append((Cast(t, bo), {bo: True}))
        cases.append((Cast(t, bo), {bo: False}))
    assert _check_exprs(cases, bitvector) > 500


def test_bitwise_on_mathematical_integers_is_unsupported_not_wrong():
    a, b = Var("a", MATH_INT), Var("b", MATH_INT)
    with pytest.raises(UnsupportedError):
        Encoder().expr(Binary("|", a, b, MATH_INT), {"a": z3.Int("a"), "b": z3.Int("b")})


def test_havocked_array_reads_are_in_range():
    """An unconstrained Int->Int array must still yield unsigned char values (integer mode)."""
    arr = Var("a", ArrayType(I32, U8))
    enc = Encoder()
    a = z3.Array("a", z3.IntSort(), z3.IntSort())
    r = enc.expr(Select(arr, const(3, I32), U8), {"a": a})
    s = z3.Solver()
    s.add(z3.Or(r < 0, r > 255))
    assert s.check() == z3.unsat
    s = z3.Solver()
    s.add(a[3] == 300, r != 255)    # and the normalisation clamps (`IntType.clamp`), 300 -> 255
    assert s.check() == z3.unsat
    s = z3.Solver()
    s.add(a[3] == 7, r != 7)        # every value of the type reads back as itself
    assert s.check() == z3.unsat


def test_dag_keeps_both_nondeterministic_branches():
    """Two enabled branches joining again: the merge must not prefer one of them (else a wrong TRUE)."""
    p = Prog("nd")
    x = p.var("x", I32)
    with p.if_(None) as els:
        p.assign(x, c(1))
        els()
        p.assign(x, c(2))
    p.assert_(ne(x, c(2)))
    prog = p.build()
    enc = Encoder(prog)
    succ = {l: [(e, e.dst) for e in prog.out_edges(l)] for l in prog.locations if l != prog.exit}
    order = list(prog.locations)  # the builder numbers locations in a topological order here
    env0, side = enc.initial_env(prog.all_vars)
    dag = encode_dag(enc, DagSpec(prog.init, order, succ), env0)
    s = z3.Solver()
    s.add(*side, *dag.side, dag.error())
    assert s.check() == z3.sat
    path, viol, _ = dag.path(lambda t: s.model().eval(t, model_completion=True))
    # constants stay Python values in the SSA environment
    assert viol is not None and any(ee.written.get("x") == 2 for ee in path)


def counter_program():
    p = Prog("cnt")
    x = p.var("x", U8)
    p.assign(x, const(250, U8))
    with p.while_(ne(x, const(3, U8))):
        p.assign(x, add(x, const(1, U8)))
    p.assert_(eq(x, const(3, U8)))
    return p.build()


@pytest.mark.parametrize("bitvector", [False, True], ids=["int", "bv"])
def test_cpg_transition_system_steps(bitvector):
    """Init, one fragment step, wrap-around of the unsigned char in the loop step."""
    prog = counter_program()
    cpg = build_cpg(prog)
    sysm = CPGSystem(cpg, bitvector)
    ts = sysm.ts
    head = cpg.cutpoints[0]
    s = z3.Solver()
    s.add(ts.at(ts.init, 0), ts.trans_at(0))
    assert s.check() == z3.sat
    m = s.model()
    assert m.eval(sysm.pc_at(1)).as_long() == sysm.pc_id[head]
    assert sysm.enc.to_python(m.eval(sysm.state_at(1)["x"]), U8) == 250
    # from x = 255 at the head, the loop step wraps to 0
    s = z3.Solver()
    s.add(sysm.pc_at(0) == sysm.pc_id[head], sysm.state_at(0)["x"] == sysm.enc.value(255, U8),
          ts.trans_at(0), sysm.pc_at(1) == sysm.pc_id[head])
    assert s.check() == z3.sat
    assert sysm.enc.to_python(s.model().eval(sysm.state_at(1)["x"]), U8) == 0
    # Bad is unreachable in one step from the head (the assert after the loop holds)
    s = z3.Solver()
    s.add(sysm.pc_at(0) == sysm.pc_id[head], *sysm.range_constraints(sysm.state_at(0)), ts.trans_at(0),
          ts.at(ts.bad, 1))
    assert s.check() == z3.unsat


def test_cpg_edge_formulas_partition_the_step():
    prog = counter_program()
    cpg = build_cpg(prog)
    sysm = CPGSystem(cpg)
    head = cpg.cutpoints[0]
    edges = {e.dst: sysm.edge_formula(e) for e in cpg.out_edges(head)}
    x, x1 = sysm.cur["x"], sysm.nxt["x"]
    s = z3.Solver()
    s.add(x == 7, edges[head])
    assert s.check() == z3.sat and s.model().eval(x1).as_long() == 8
    s = z3.Solver()
    s.add(x == 3, edges[head])
    assert s.check() == z3.unsat
    s = z3.Solver()
    s.add(x == 3, edges[prog.exit])
    assert s.check() == z3.sat


def test_int_min_remainder_minus_one_is_flagged_as_overflow():
    """C11 6.5.5: INT_MIN % -1 is undefined because INT_MIN / -1 is; the interpreter must not treat it as 0."""
    from looprover.program.expr import binary
    i32 = I32
    ev = Evaluator("math")
    ev.eval(binary("%", IntConst(-2**31, i32), IntConst(-1, i32)), {})
    assert ev.overflowed
    ev = Evaluator("math")
    assert ev.eval(binary("%", IntConst(-7, i32), IntConst(2, i32)), {}) == -1 and not ev.overflowed


def _random_tree(rng: random.Random, t, leaves, depth: int):
    """A random expression of type t over `leaves` (vars per type): unsigned/signed +, -, *, /, % and casts
    between widths, nested -- the shapes where the encoder reuses wrap-free values of inner results."""
    if depth == 0 or rng.random() < 0.2:
        if rng.random() < 0.3:
            return IntConst(t.wrap(rng.choice([0, 1, 3, 255, 65535, -1, -3, 2**31, 2**32 - 5])), t)
        return leaves[t]
    kind = rng.random()
    if kind < 0.2:
        u = rng.choice([U8, U16, U32, U64, I32])
        return Cast(t, _random_tree(rng, u, leaves, depth - 1))
    op = rng.choice(["+", "+", "-", "-", "*", "/", "%"])
    lhs = _random_tree(rng, t, leaves, depth - 1)
    rhs = IntConst(t.wrap(rng.choice([1, 3, 7, 1000])), t) if op in "*/%" and rng.random() < 0.7 else \
        _random_tree(rng, t, leaves, depth - 1)
    return Binary(op, lhs, rhs, t)


@pytest.mark.parametrize("bitvector", [False, True], ids=["int", "bv"])
def test_nested_unsigned_arithmetic_matches_interpreter(bitvector):
    """Wrapped results fed into further +, -, * of the same or another width (the encoder's wrap-free reuse,
    `Encoder._unsigned_arith`) stay exactly C's values."""
    rng = random.Random(11)
    types = [U8, U16, U32, U64, I32]
    leaves = {t: Var(f"v{t.bits}{'s' if t.signed else 'u'}", t) for t in types}
    ev = Evaluator("wrap" if bitvector else "math")
    cases = []
    for _ in range(600):
        t = rng.choice(types)
        e = _random_tree(rng, t, leaves, 5)
        vals = {v: rng.choice(_values(rng, v.type, 2)) for v in leaves.values()}
        ev.overflowed = False
        try:
            ev.eval(e, {v.name: x for v, x in vals.items()})
        except UndefinedBehavior:
            continue
        if not (ev.overflowed and not bitvector):     # integer mode is exact without signed overflow only
            cases.append((e, vals))
    assert _check_exprs(cases, bitvector) > 200


def test_bitvector_reason_finds_operators_without_a_linear_identity():
    """Masks, their complements, 0 and all-ones have linear identities (no reason to leave integers); `x & y`,
    `x | 5` and `x ^ 6` do not."""
    from looprover.smt.encode import bitvector_reason

    def prog(make):
        p = Prog("bits")
        x, y = p.var("x", U32, "nondet"), p.var("y", U32, "nondet")
        p.havoc(x)
        p.havoc(y)
        p.assert_(ne(make(x, y), c(7, U32)))
        return p.build()
    fine = [lambda x, y: Binary("&", x, IntConst(255, U32), U32), lambda x, y: Binary("|", x, IntConst(0, U32), U32),
            lambda x, y: Binary("&", x, IntConst(U32.wrap(-16), U32), U32),
            lambda x, y: Binary("^", IntConst(U32.max, U32), x, U32), lambda x, y: add(x, y)]
    hopeless = [lambda x, y: Binary("&", x, y, U32), lambda x, y: Binary("|", x, IntConst(5, U32), U32),
                lambda x, y: Binary("^", x, IntConst(6, U32), U32)]
    assert all(bitvector_reason(prog(m)) is None for m in fine)
    assert all("bitwise" in bitvector_reason(prog(m)) for m in hopeless)



def _euclid_shapes(x: Var, y: Var, d: int) -> list[Binary]:
    """Euclidean remainder and division written with C's operators (as the CHC front-end writes SMT-LIB's
    `mod`/`div`), and near misses the encoder must encode literally."""
    t = x.type
    k = lambda v: IntConst(t.wrap(v), t)                                        # noqa: E731
    rem = lambda a, m: Binary("%", Binary("+", Binary("%", a, k(m), t), k(m), t), k(m), t)  # noqa: E731
    return [rem(x, abs(d)),
            Binary("/", Binary("-", x, rem(x, abs(d)), t), k(d), t),
            Binary("%", Binary("+", Binary("%", x, k(abs(d)), t), k(abs(d) - 1), t), k(abs(d)), t),   # + d - 1
            Binary("/", Binary("-", y, rem(x, abs(d)), t), k(d), t),                                    # y - r(x)
            Binary("/", Binary("-", x, Binary("%", x, k(abs(d)), t), t), k(d), t),                     # C's %
            Binary("/", Binary("-", x, rem(x, abs(d) + 1), t), k(d), t)]                               # other d


@pytest.mark.parametrize("bitvector", [False, True], ids=["int", "bv"])
def test_euclidean_shapes_match_interpreter(bitvector):
    """`((x % d) + d) % d` and `(x - that) / c` (|c| = d) are encoded as one z3 `mod` / `div` of x
    (`encode._euclidean_dividend`); in every type they and their near misses keep C's values."""
    rng = random.Random(5)
    cases = []
    for t in TYPES:
        x, y = Var("x", t), Var("y", t)
        for d in (1, 2, 3, 7, 10, -7, -10):
            if not t.signed and d < 0 and t.bounded:
                continue
            for e in _euclid_shapes(x, y, d):
                for xv, yv in zip(_values(rng, t, 4), reversed(_values(rng, t, 4))):
                    cases.append((e, {x: xv, y: yv}))
    assert _check_exprs(cases, bitvector) > 1000


def test_euclidean_shapes_are_one_div_or_mod_on_mathematical_integers():
    x, y = Var("x", MATH_INT), Var("y", MATH_INT)
    env = {"x": z3.Int("x"), "y": z3.Int("y")}
    for d in (3, -3):
        rem, quot, *_ = _euclid_shapes(x, y, d)
        assert Encoder().expr(rem, env).eq(env["x"] % 3)
        assert Encoder().expr(quot, env).eq(env["x"] / d)
