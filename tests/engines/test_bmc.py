"""BMC by loop unwinding: proofs through unwinding assertions, replayed counterexamples, both semantics."""
import pytest

from helpers import enginecases as ec
from looprover.engines import verify
from looprover.engines import bmc
from looprover.verdict import Status

MODES = pytest.mark.parametrize("bitvector", [False, True], ids=["int", "bv"])


def run(prog, bitvector=False, max_bound=None, timeout=20.0):
    return verify("bmc", prog, timeout=timeout, bitvector=bitvector, max_bound=max_bound)


def assert_false(v, inputs=None):
    assert v.status == Status.FALSE, v.reason
    cex = v.evidence
    assert cex.validated
    if inputs is not None:
        assert cex.inputs == inputs
    return cex


CASES = [
    ("loopfree-safe", lambda: ec.loopfree(True), Status.TRUE),
    ("loopfree-unsafe", lambda: ec.loopfree(False), Status.FALSE),
    ("bounded-safe", lambda: ec.bounded_loop(True), Status.TRUE),
    ("bounded-unsafe", lambda: ec.bounded_loop(False), Status.FALSE),
    ("nested-safe", lambda: ec.nested(True), Status.TRUE),
    ("nested-unsafe", lambda: ec.nested(False), Status.FALSE),
    ("udec-safe", ec.unsigned_decrement, Status.TRUE),
    ("uwrap-unsafe", ec.unsigned_wrap_bug, Status.FALSE),
    ("uchar-unsafe", ec.uchar_overflow_bug, Status.FALSE),
    ("sucmp-safe", lambda: ec.signed_unsigned_compare(True), Status.TRUE),
    ("sucmp-unsafe", lambda: ec.signed_unsigned_compare(False), Status.FALSE),
    ("negdiv-safe", lambda: ec.negative_division(True), Status.TRUE),
    ("negdiv-unsafe", lambda: ec.negative_division(False), Status.FALSE),
    ("array-safe", lambda: ec.array_init(True), Status.TRUE),
    ("array-unsafe", lambda: ec.array_init(False), Status.FALSE),
    ("array-nondet-safe", lambda: ec.array_nondet(True), Status.TRUE),
    ("array-nondet-unsafe", lambda: ec.array_nondet(False), Status.FALSE),
    ("doubling-unsafe", ec.doubling_wrap_bug, Status.FALSE),
]


@MODES
@pytest.mark.parametrize("name,make,expected", CASES, ids=[c[0] for c in CASES])
def test_verdicts(name, make, expected, bitvector):
    v = run(make(), bitvector, max_bound=64)
    assert v.status == expected, v.reason
    if expected == Status.FALSE:
        assert v.evidence.validated and v.evidence.steps


@MODES
def test_loopfree_counterexample_inputs(bitvector):
    cex = assert_false(run(ec.loopfree(False), bitvector), inputs=[4])
    assert cex.steps[-1].edge.stmts[-1].__class__.__name__ == "Assert"


@MODES
def test_deep_bug_needs_iterations_and_reports_its_input(bitvector):
    v = run(ec.deep_bug(), bitvector)
    cex = assert_false(v, inputs=[42])
    assert v.stats["bound"] >= 6          # six arrivals at the loop head before the failing iteration
    assert cex.initial.keys() >= {"x", "i"}


@MODES
def test_unbounded_safe_loop_is_not_proved(bitvector):
    v = run(ec.even_counter(7), bitvector, max_bound=8)
    assert v.status == Status.UNKNOWN and "bound" in v.reason
    v = run(ec.nonneg_counter(), bitvector, max_bound=4)
    assert v.status == Status.UNKNOWN


def test_unbounded_unsafe_loop_is_found():
    cex = assert_false(run(ec.even_counter(8)))
    assert cex.inputs == [True] * 4 + [False]


def test_array_counterexample_carries_array_contents():
    cex = assert_false(run(ec.array_nondet(False)))
    from looprover.program.interp import ArrayValue
    a = cex.havocs[0]
    assert isinstance(a, ArrayValue) and a.get(cex.inputs[0]) == 200


def test_irreducible_is_unknown():
    v = run(ec.irreducible(True))
    assert v.status == Status.UNKNOWN and "irreducible" in v.reason


def test_no_assertion_is_true():
    from helpers.progdsl import Prog, add, c
    from looprover.program.expr import I32
    p = Prog("noassert")
    x = p.var("x", I32)
    with p.while_(None):
        p.assign(x, add(x, c(1)))
    assert run(p.build()).status == Status.TRUE


def test_incremental_and_fresh_solvers_agree():
    """The push/pop variant (kept for measurement) gives the same answers as the fresh-solver default."""
    from looprover.program.loops import analyze_loops
    from looprover.smt.solver import Solver
    for prog in (ec.nested(True), ec.deep_bug(), ec.even_counter(7)):
        forest = analyze_loops(prog)
        s = Solver()
        for k in (1, 2, 4, 8):
            a = bmc.check_bound(prog, forest, k, False, None).status
            b = bmc.check_bound(prog, forest, k, False, None, solver=s).status
            assert a == b


def _break_continue():
    from helpers.progdsl import Prog, add, c, eq, lt, ne
    from looprover.program.expr import I32
    p = Prog("bc")
    i, j, s = p.var("i", I32), p.var("j", I32), p.var("s", I32)
    p.assign(i, c(0))
    with p.while_(lt(i, c(4))):
        p.assign(i, add(i, c(1)))
        p.assign(j, c(0))
        with p.while_(None):
            p.assign(j, add(j, c(1)))
            with p.if_(eq(j, c(2))):
                p.break_()
            with p.if_(eq(i, c(3))):
                p.continue_()
            p.assign(s, add(s, c(1)))
        with p.if_(eq(i, c(2))):
            p.continue_()
        p.assign(s, add(s, c(10)))
    p.assert_(ne(s, c(33)))
    return p.build()


def test_unwinding_key_is_topological():
    """Every edge of the unrolling leads to a larger key (what the lazy encoder relies on)."""
    from looprover.program.loops import analyze_loops
    for prog in (ec.nested(True), ec.nested_unbounded(7), _break_continue(), ec.deep_bug()):
        unw = bmc.Unwinding(prog, analyze_loops(prog), 3)
        todo, seen = [unw.entry], {unw.entry}
        while todo:
            n = todo.pop()
            for _, d in unw.successors(n):
                assert unw.key(d) > unw.key(n), (n, d)
                if d not in seen:
                    seen.add(d)
                    todo.append(d)


@MODES
def test_break_continue_nested(bitvector):
    """s counts: inner loop body once per outer iteration (j==1), +10 except when i==2; s == 33 at the end."""
    v = run(_break_continue(), bitvector)
    cex = assert_false(v)
    assert cex.steps
