"""The interval analysis over-approximates: every concrete value, run and violation stays inside what it says,
in both encodings' readings (integer: signed arithmetic keeps its mathematical value; bit-vector: it wraps)."""
from __future__ import annotations

import random

import pytest

from looprover.absint.fixpoint import analyze
from looprover.absint.values import INF, Semantics, compare, lookup
from looprover.program.expr import (
    BOOL, I8, I32, U8, U32, Binary, BoolConst, Cast, IntConst, Ite, Not, Unary, Var, and_, cmp, or_,
)
from looprover.program.interp import Evaluator, Oracle, UndefinedBehavior, run

from helpers.randprog import random_program

TYPES = (I8, U8, I32, U32)
VARS = [Var(f"{t}v{i}", t) for t in TYPES for i in range(2)] + [Var("b", BOOL)]
OPS = ("+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>")


def _itv(r: random.Random, t) -> tuple[int, int]:
    a, b = sorted(r.randint(t.min, t.max) if r.random() < 0.3 else r.randint(max(t.min, -40), min(t.max, 40))
                  for _ in range(2))
    return (a, b)


def _state(r: random.Random) -> dict:
    s = {}
    for v in VARS:
        if v.type == BOOL:
            if r.random() < 0.5:
                s[v.name] = r.random() < 0.5
        elif r.random() < 0.8:
            s[v.name] = _itv(r, v.type)
    return s


def _sample(r: random.Random, s: dict) -> dict:
    out = {}
    for v in VARS:
        a = lookup(s, v)
        if v.type == BOOL:
            out[v.name] = a if a is not None else r.random() < 0.5
        else:
            lo, hi = a
            out[v.name] = r.choice([lo, hi, r.randint(lo, hi)])
    return out


def _expr(r: random.Random, t, depth: int):
    if t == BOOL:
        k = r.random()
        if depth == 0 or k < 0.15:
            return Var("b", BOOL) if r.random() < 0.7 else BoolConst(r.random() < 0.5)
        if k < 0.7:
            u = r.choice(TYPES)
            return cmp(r.choice(["<", "<=", ">", ">=", "==", "!="]), _expr(r, u, depth - 1), _expr(r, u, depth - 1))
        if k < 0.8:
            return Not(_expr(r, BOOL, depth - 1))
        return (and_ if r.random() < 0.5 else or_)(_expr(r, BOOL, depth - 1), _expr(r, BOOL, depth - 1))
    k = r.random()
    if depth == 0 or k < 0.2:
        if r.random() < 0.7:
            return r.choice([v for v in VARS if v.type == t])
        return IntConst(r.randint(max(t.min, -9), min(t.max, 9)) if r.random() < 0.8 else t.max, t)
    if k < 0.3:
        return Cast(t, _expr(r, r.choice(TYPES), depth - 1)) if r.random() < 0.8 else \
            Cast(t, _expr(r, BOOL, depth - 1))
    if k < 0.4:
        return Unary(r.choice("-~"), _expr(r, t, depth - 1), t)
    if k < 0.5:
        return Ite(_expr(r, BOOL, depth - 1), _expr(r, t, depth - 1), _expr(r, t, depth - 1), t)
    op = r.choice(OPS)
    rhs = IntConst(r.randint(0, t.bits - 1), t) if op in ("<<", ">>") and r.random() < 0.6 else \
        _expr(r, t, depth - 1)
    return Binary(op, _expr(r, t, depth - 1), rhs, t)


def _inside(value, abstract) -> bool:
    if isinstance(abstract, tuple):
        return abstract[0] <= value <= abstract[1]
    return abstract is None or abstract == value


@pytest.mark.parametrize("bitvector", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_each_expression_s_values_lie_in_its_interval(seed, bitvector):
    r = random.Random(seed)
    sem = Semantics(bitvector, {v.name: v.type for v in VARS})
    ev = Evaluator("wrap" if bitvector else "math")
    checked = 0
    for _ in range(300):
        e = _expr(r, r.choice(TYPES + (BOOL,)), 3)
        s = _state(r)
        a = sem.eval(e, s)
        for _ in range(5):
            c = _sample(r, s)
            try:
                value = ev.eval(e, c)
            except UndefinedBehavior:
                continue
            assert _inside(value, a), (str(e), s, c, value, a)
            checked += 1
    assert checked > 800


@pytest.mark.parametrize("bitvector", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_refinement_keeps_every_state_that_satisfies_the_condition(seed, bitvector):
    r = random.Random(100 + seed)
    sem = Semantics(bitvector, {v.name: v.type for v in VARS})
    ev = Evaluator("wrap" if bitvector else "math")
    kept = 0
    for _ in range(300):
        cond = _expr(r, BOOL, 3)
        s = _state(r)
        for positive in (True, False):
            refined = sem.refine(s, cond, positive)
            for _ in range(5):
                c = _sample(r, s)
                try:
                    holds = ev.eval(cond, c)
                except UndefinedBehavior:
                    continue
                if holds != positive:
                    continue
                assert refined is not None, (str(cond), positive, s, c)
                assert all(_inside(c[v.name], lookup(refined, v)) for v in VARS), (str(cond), positive, s, c, refined)
                kept += 1
    assert kept > 500


def test_a_comparison_is_decided_only_where_the_intervals_decide_it():
    assert compare("<", (0, 4), (5, 9)) is True
    assert compare("<", (0, 5), (5, 9)) is None
    assert compare(">=", (0, 4), (5, 9)) is False
    assert compare("==", (3, 3), (3, 3)) is True
    assert compare("!=", (0, 2), (3, INF)) is True


def _encoded(term, x, y, vx: int, vy: int) -> int | None:
    """The integer encoding's `term` at x = vx, y = vy (None where it is left open: division by zero)."""
    import z3
    r = z3.simplify(z3.substitute(term, (x, z3.IntVal(vx)), (y, z3.IntVal(vy))))
    return r.as_long() if z3.is_int_value(r) else None


@pytest.mark.parametrize("seed", range(8))
def test_operations_on_values_beyond_their_types_cover_the_encoding_s_reading_and_c_s(seed):
    """With integers a signed value may lie beyond its type (overflow is kept), and what the encoding makes of
    an operation on it -- a conversion, unsigned arithmetic, division, shifts, masks -- follows its cheap
    per-type-range wraps (`Encoder._wrap`), which C's exact wrap need not. The interval holds both: z3
    evaluates the encoder's term at sampled operand values. (cwalk's proof failed its check on
    `(size_t)(p - q)` and on a size_t sum of it, which the analysis had read as C's wraps.)"""
    import z3
    from looprover.program.expr import I64, U64
    from looprover.smt.encode import Encoder
    r = random.Random(seed)
    enc = Encoder(None, bitvector=False)
    x, y = z3.Int("x"), z3.Int("y")
    types = (I8, U8, I32, U32, I64, U64)
    ev = Evaluator("math")
    for _ in range(400):
        tx, ty = r.choice(types), r.choice(types)
        k = r.random()
        if k < 0.3:
            e = Cast(ty, Var("x", tx))
        elif k < 0.4:
            e = Unary(r.choice(["-", "~"]), Var("x", tx), tx)
        else:
            op = r.choice(OPS)
            e = Binary(op, Var("x", tx), Var("y", I32 if op in ("<<", ">>") else tx), tx)
        ranges = {}
        for name, u in (("x", tx), ("y", e.rhs.type if isinstance(e, Binary) else tx)):
            span = 1 << (u.bits + 1)
            lo = r.randint(u.min - span, u.max) if r.random() < 0.5 else r.randint(u.min, u.max)
            ranges[name] = (lo, r.randint(lo, u.max + span) if r.random() < 0.5 else max(lo, r.randint(u.min, u.max)))
        got = Semantics(False, {"x": tx, "y": e.rhs.type if isinstance(e, Binary) else tx}).eval(e, ranges)
        term = enc.expr(e, {"x": x, "y": y})
        for _ in range(3):
            vx, vy = (r.choice([a, b, r.randint(a, b)]) for a, b in (ranges["x"], ranges["y"]))
            encoded = _encoded(term, x, y, vx, vy)
            if encoded is not None:
                assert got[0] <= encoded <= got[1], (str(e), ranges, vx, vy, encoded, got)
            try:
                value = ev.eval(e, {"x": vx, "y": vy})
            except UndefinedBehavior:
                continue
            assert got[0] <= value <= got[1], (str(e), ranges, vx, vy, value, got)
    s64 = (I64.min, I64.max)
    diff = Cast(U64, Binary("-", Var("p", I64), Var("q", I64), I64))
    sem = Semantics(False, {"p": I64, "q": I64, "n": U64})
    assert sem.eval(diff, {"p": s64, "q": s64}) == (0, U64.max)
    beyond = Binary("+", Cast(U64, Var("p", I64)), Var("n", U64), U64)
    assert sem.eval(beyond, {"p": (0, INF), "n": (0, 5)}) == (-INF, INF)


class _RandomInputs(Oracle):
    def __init__(self, r: random.Random):
        self.r = r

    def __call__(self, v):
        t = v.type
        if t == BOOL:
            return self.r.random() < 0.5
        return self.r.randint(-4, 6) if t.signed else self.r.randint(0, 9)


@pytest.mark.parametrize("bitvector", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_every_run_of_a_random_program_stays_inside_the_analysis(seed, bitvector):
    """At every location a random run reaches, each variable's value lies in the location's state; no run
    violates an assertion the analysis shows."""
    program = random_program(seed)
    result = analyze(program, bitvector)
    r = random.Random(seed)
    visited = 0

    def inside(loc: int, state: dict) -> bool:
        nonlocal visited
        s = result.states[loc]
        assert s is not None, f"location {loc} reached but the analysis says nothing gets there"
        for v in program.all_vars:
            if v.type == BOOL or hasattr(v.type, "bits"):
                assert _inside(state[v.name], lookup(s, v)), (loc, v.name, state[v.name], lookup(s, v))
        visited += 1
        return False

    for _ in range(30):
        res = run(program, _RandomInputs(r), choose=r.choice, max_steps=2000,
                  signed_overflow="wrap" if bitvector else "math", until=inside)
        if res.outcome == "violation":
            ei = program.edges.index(res.edges[-1])
            si = next(i for i, st in enumerate(res.edges[-1].stmts) if st is res.violated or st == res.violated)
            assert (ei, si) not in result.proved, f"the analysis shows {res.violated} but a run violates it"
    assert visited > 30


@pytest.mark.parametrize("bitvector", [False, True])
@pytest.mark.parametrize("seed", range(40))
def test_the_cutpoint_states_of_a_random_program_are_inductive(seed, bitvector):
    """z3 decides what the runs above only sample: the states at the cutpoints hold initially and every
    cutpoint-graph step keeps them (values out of their type's range included: signed overflow with integers)."""
    from looprover.deadline import Deadline
    from looprover.evidence.proofs import invariants_failure
    from looprover.program.cpg import build_cpg
    from looprover.smt.cpg_system import CPGSystem
    program = random_program(seed)
    result = analyze(program, bitvector)
    sys = CPGSystem(build_cpg(program), bitvector)
    assert invariants_failure(sys, result.invariants(bitvector), Deadline.after(60)) is None
    # and clause by clause of the Horn clauses over the live variables, as the engine's proof is checked
    from looprover.engines.intervals import proof_of
    from looprover.program.liveness import liveness
    from looprover.smt.horn import HornSystem
    from looprover.smt.systems import cpg_horn
    from looprover.smt.text import from_text
    horn = cpg_horn(sys, liveness(program))
    rules = HornSystem(horn.params, [c for c in horn.clauses if c.head is not None], horn.names)
    interp = {n: from_text(t) for n, t in proof_of(program, result, bitvector).invariants}
    assert rules.check_solution(interp, Deadline.after(60)) is None



def test_a_widened_signed_bound_stops_at_its_type_s_end_before_infinity():
    """With integers a signed value leaves its type only by an overflow: widening stops at the type's end
    first (jsmn: an `int` copy of an unsigned position widened to +inf made its conversions back to unsigned
    unbounded, and 15 checks unshown); a bound already past the type (an overflow) goes on to infinity."""
    from looprover.absint.fixpoint import _widen
    types = {"i": I32, "u": U32}
    old, new = {"i": (0, 10), "u": (0, 10)}, {"i": (-3, 11), "u": (0, 11)}
    assert _widen(old, new, types, [], False) == {}        # both their whole type (which a state leaves out)
    assert _widen(old, new, types, [100], False)["i"] == (I32.min, 100)
    assert _widen({"i": (0, I32.max + 1)}, {"i": (0, I32.max + 2)}, types, [], False) == {"i": (0, INF)}


def test_widening_stops_at_the_constants_a_variable_is_compared_with(tmp_path):
    """A busy loop whose constants lie dense below a counter's limit (jsmn: character codes below its 16
    tokens): the rounds that stop at the program's constants run out before the counter reaches 16; without
    its own constants it went to infinity, and the path that keeps it (`if (k >= 16) continue`) kept it there.
    With them the index after the loop is shown."""
    from looprover.frontend.c import load_c_program
    path = tmp_path / "p.c"
    path.write_text("""extern int __VERIFIER_nondet_int(void);
int main(void) {
  int a[17];
  int k = 0, y = 0;
  for (int i = 0; i < 1000; i++) {
    int c = __VERIFIER_nondet_int();
    if (c == 2 || c == 4 || c == 8 || c == 9 || c == 10 || c == 13) y = c;
    if (k >= 16) continue;
    k++;
  }
  a[k] = y;
  return a[k];
}
""")
    result = analyze(load_c_program(path, memsafety=True), False)
    assert result.proved and not result.unproved
