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
    prog = make()
    v = run(prog, bitvector, max_bound=64)
    assert v.status == expected, v.reason
    if expected == Status.FALSE:
        assert v.evidence.validated and v.evidence.steps
    else:
        assert _proof_failure(prog, v, bitvector) is None


def _proof_failure(prog, v, bitvector):
    """Why the proof of BMC's TRUE `v` does not pass the check with fresh solvers (None when it does)."""
    from looprover.deadline import Deadline
    from looprover.evidence.proofs import Proof
    from looprover.evidence.recheck import recheck_proof
    assert isinstance(v.evidence, Proof), v.evidence
    return recheck_proof(prog, v.evidence, bitvector, Deadline.after(60))


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


def _two_loops(bad: int, cap: int | None = None):
    """n = nondet; (assume n <= cap;) i = 0; while (i < n) i++; j = 0; while (j < 2) j++; assert(i != bad).
    The node after loop 1 is encoded at bound 1 and gains an in-edge at every larger bound; the bug needs
    loop 1 to run `bad` times."""
    from helpers.progdsl import Prog, add, c, le, lt, ne
    from looprover.program.expr import I32
    p = Prog("twoloops")
    n, i, j = p.var("n", I32, "nondet"), p.var("i", I32), p.var("j", I32)
    p.havoc(n)
    if cap is not None:
        p.assume(le(n, c(cap)))
    p.assign(i, c(0))
    with p.while_(lt(i, n)):
        p.assign(i, add(i, c(1)))
    p.assign(j, c(0))
    with p.while_(lt(j, c(2))):
        p.assign(j, add(j, c(1)))
    p.assert_(ne(i, c(bad)))
    return p.build()


class _Recorder:
    """Wraps the unrolling's solver: every formula asserted, per bound."""

    def __init__(self, u):
        self.per_bound: list[list] = []
        self.solvers = set()
        add = u._add

        def record(fs):
            self.per_bound.append(list(fs))
            add(fs)
            self.solvers.add(id(u.solver))
        u._add = record


@pytest.mark.parametrize("bitvector", [False, True], ids=["int", "bv"])
def test_next_bound_asserts_only_new_constraints(bitvector):
    """One solver for the run; no formula is asserted twice; after bound 1 each bound adds its new nodes'
    constraints only (a few per new node, not the whole unrolling again)."""
    from looprover.program.loops import analyze_loops
    for prog in (ec.nested_unbounded(7), _two_loops(5), ec.even_counter(7), _break_continue()):
        u = bmc.Unrolling(prog, analyze_loops(prog), bitvector, None)
        rec = _Recorder(u)
        nodes = [0]
        for k in range(1, 9):
            assert u.check(k).status in ("limit", "violation", "safe")
            nodes.append(u.lazy.nodes)
        assert len(rec.solvers) == 1
        ids = [f.get_id() for fs in rec.per_bound for f in fs]
        assert len(ids) == len(set(ids)), "a formula was asserted twice"
        for k in range(2, 9):
            new_nodes = nodes[k] - nodes[k - 1]
            assert len(rec.per_bound[k - 1]) <= 8 * new_nodes + 4, (prog.name, k)


def test_join_after_a_loop_gains_in_edges():
    """Bound 4 lets loop 1 run 4 times (limit reached, no violation); bound 5 adds only the fifth iteration,
    and the node after loop 1, encoded open at bound 1, gets the new exit: the violation is found."""
    from looprover.program.loops import analyze_loops
    prog = _two_loops(5)
    forest = analyze_loops(prog)
    u = bmc.Unrolling(prog, forest, False, None)
    for k in (1, 2, 3, 4):
        assert u.check(k).status == "limit"
    after = [n for n in u.lazy.opened if n[1] == ()]       # outside every loop: after loop 1
    assert after, "the node after loop 1 must be open"
    assert len(u.dag.incoming[after[0]]) >= 5             # the exits of iterations 0..4
    kept = u.lazy.kept[after[0]]
    assert "n" in kept and "i" not in kept                # loop 1 writes i only: n stays the same term
    res = u.check(5)
    assert res.status == "violation"
    cex = u.counterexample(res.model)
    assert cex.inputs and cex.inputs[0] >= 5


@MODES
def test_bug_after_first_of_two_loops(bitvector):
    v = run(_two_loops(5), bitvector)
    cex = assert_false(v)
    assert cex.inputs[0] >= 5
    assert v.stats["open"] >= (0 if bitvector else 1)      # bit-vectors: a fresh unrolling per bound
    assert run(_two_loops(9, cap=6), bitvector).status == Status.TRUE     # n <= 6: i == 9 unreachable


def test_constant_bound_loop_closes_its_exit():
    """A loop exhausted by constant folding cannot grow: the nodes after it keep the `If` encoding."""
    v = run(ec.nested(True))
    assert v.status == Status.TRUE and v.stats["open"] == 0


def test_sources_invert_targets():
    """`Unwinding.sources` (what the frontier reasons with) lists every edge of the unrolling into a node."""
    from helpers.randprog import random_program
    from looprover.program.loops import analyze_loops
    progs = [ec.nested(True), ec.nested_unbounded(7), _break_continue(), _two_loops(3)]
    progs += [random_program(s) for s in range(40)]
    for prog in progs:
        forest = analyze_loops(prog)
        unw = bmc.Unwinding(prog, forest, 3)
        todo, seen = [unw.entry], {unw.entry}
        while todo:
            n = todo.pop()
            for e, d in unw.successors(n):
                if d == bmc.LIMIT:
                    continue
                srcs = unw.sources(d)
                assert any(x is e and (s == n or s is None and n[0] in forest.loops[left[0]].body
                                       and n[1][:len(left[1])] == left[1])
                           for x, s, left in srcs), (prog.name, n, d)
                if d not in seen:
                    seen.add(d)
                    todo.append(d)


def _incremental_finds_violation(prog, bitvector: bool) -> bool:
    """The incremental unrolling's answer through the bound schedule (the engine uses it for integers only,
    so this checks it in the bit-vector encoding too)."""
    from looprover.program.loops import analyze_loops
    u = bmc.Unrolling(prog, analyze_loops(prog), bitvector, None)
    for k in bmc.bound_schedule(64):
        status = u.check(k).status
        if status != "limit":
            assert status in ("violation", "safe")
            return status == "violation"
    raise AssertionError("not decided at bound 64")


@pytest.mark.parametrize("bitvector", [False, True], ids=["int", "bv"])
@pytest.mark.parametrize("seeds,depth", [(range(0, 40), 2), pytest.param(range(40, 300), 2, marks=pytest.mark.slow),
                                         pytest.param(range(1000, 1150), 3, marks=pytest.mark.slow)],
                         ids=["few", "many", "deep"])
def test_random_programs_agree_with_explicit_search(bitvector, seeds, depth):
    """Random programs with nested and sequential loops (nondeterministic and constant bounds, break/continue):
    BMC's verdict, and the incremental unrolling's in both encodings, is the one of an explicit-state search
    with the interpreter, safe and unsafe."""
    from helpers.explore import violation_reachable
    from helpers.randprog import Gen
    wrong, decided = [], {True: 0, False: 0}
    for seed in seeds:
        p = Gen(seed, max_depth=depth, stmts=5 if depth == 2 else 6).build()
        truth = violation_reachable(p, wrap=bitvector)
        if truth is None:
            continue
        v = run(p, bitvector, max_bound=64)
        assert v.status != Status.UNKNOWN, (seed, v.reason)
        if (v.status == Status.FALSE) != truth or _incremental_finds_violation(p, bitvector) != truth:
            wrong.append(seed)
        elif v.status == Status.TRUE and _proof_failure(p, v, bitvector) is not None:
            wrong.append(seed)      # the unrolling built afresh at the bound handed over does not agree
        decided[truth] += 1
    assert not wrong, f"verdicts differ from the explicit search on seeds {wrong}"
    assert decided[True] >= 5 and decided[False] >= 5


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


def test_logic_widened_by_a_later_bound_gets_a_new_solver():
    """A product first unrolled at bound 4 leaves QF_AUFLIA: the unrolling moves everything asserted so far to a
    solver for the wider logic and still finds the bug (x * x == 49 in the fourth iteration)."""
    from helpers.progdsl import Prog, add, c, eq, lt, mul, ne
    from looprover.program.expr import I32
    from looprover.program.loops import analyze_loops
    p = Prog("late_product")
    x, n = p.var("x", I32, "nondet"), p.var("n", I32, "nondet")
    i, y = p.var("i", I32), p.var("y", I32)
    p.havoc(x, n)
    p.assign(i, c(0))
    p.assign(y, c(0))
    with p.while_(lt(i, n)):
        with p.if_(eq(i, c(3))):
            p.assign(y, mul(x, x))
        p.assign(i, add(i, c(1)))
    p.assert_(ne(y, c(49)))
    prog = p.build()
    u = bmc.Unrolling(prog, analyze_loops(prog), False, None)
    rec = _Recorder(u)
    for k in (1, 2):
        assert u.check(k).status == "limit"
    assert u.logic == "QF_AUFLIA"
    res = u.check(4)
    assert u.logic is None and len(rec.solvers) == 2 and res.status == "violation"
    cex = assert_false(run(prog))
    assert cex.inputs[0] in (7, -7)
