"""Program slicing (`transforms/slicing.py`): the direction of its over-approximation on concrete runs (every run
of the program is a run of the slice, failing the same assertion at the same step), what it drops, and its
verdicts carried back (`engines.transformed.OnSlice`): a TRUE with a proof checked on the program, a
counterexample only once it replays on the program."""
from __future__ import annotations

import random

from looprover.deadline import Deadline
from looprover.engines import get_engine
from looprover.engines.base import Run, Task, run_engine
from looprover.engines.transformed import OnSlice
from looprover.evidence.proofs import TransformedProof
from looprover.evidence.recheck import evidence_failure
from looprover.program.cfa import Assert, Assign, Assume, Edge, Havoc, ProgramBuilder
from looprover.program.expr import I32, U8, BoolType, IntType, cast
from looprover.program.interp import Evaluator, InputOracle, Oracle, UndefinedBehavior, commit, run, try_edge
from looprover.transforms.slicing import control_dependences, slice_program
from looprover.verdict import Status

from helpers.progdsl import Prog, add, c, eq, ge, gt, le, lt, ne
from helpers.randprog import random_program


class _Recording(Oracle):
    """Random values for the havocs, recorded in order (so that the same run can be made on the slice). The
    interpreter tries each enabled edge from one snapshot and restores the snapshot taken after the edge it
    chose, so a snapshot is a copy of the values so far."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.values: list = []

    def __call__(self, v):
        t = v.type
        val = self.rng.random() < 0.5 if isinstance(t, BoolType) else t.wrap(self.rng.randint(-4, 6))
        self.values.append(val)
        return val

    def snapshot(self):
        return list(self.values)

    def restore(self, snap) -> None:
        self.values = list(snap)


def _one_assertion(program, keep: int):
    """`program` with its `keep`-th assertion the only one, the others assumptions (as `check` runs a check)."""
    k = -1
    edges = []
    for e in program.edges:
        stmts = []
        for s in e.stmts:
            if isinstance(s, Assert):
                k += 1
                s = s if k == keep else Assume(s.cond, s.src)
            stmts.append(s)
        edges.append(Edge(e.src, e.dst, tuple(stmts)))
    return program.with_edges(edges)


def test_every_run_of_the_program_is_a_run_of_the_slice():
    """Random programs, each with one of its assertions kept: 15 random runs of each on the interpreter, then the
    same edges with the same havoc values on the slice. The slice never blocks where the program went on and
    fails the same assertion at the same step (the guarantee), and it drops statements in most programs (the
    test would pass vacuously if it dropped nothing)."""
    rng = random.Random(7)
    programs = dropped = violations = 0
    for seed in range(40):
        base = random_program(seed)
        asserts = len(base.assertions())
        for keep in sorted({0, asserts - 1, rng.randrange(asserts)}):
            program = _one_assertion(base, keep)
            sliced, stats = slice_program(program)
            sliced.check()
            programs += 1
            dropped += stats.kept < stats.statements
            position = {id(e): i for i, e in enumerate(program.edges)}
            for _ in range(15):
                oracle = _Recording(rng)
                res = run(program, oracle, choose=rng.choice, max_steps=400)
                if res.outcome == "undefined":
                    continue
                ev = Evaluator("math")
                state = {n: 0 if isinstance(i.var.type, IntType) else False for n, i in sliced.variables.items()}
                replay = InputOracle(sliced, havocs=oracle.values, strict=True)
                for step, edge in enumerate(res.edges):
                    try:
                        r = try_edge(ev, sliced.edges[position[id(edge)]], state, replay)
                    except UndefinedBehavior:
                        break          # what the program did not compute may overflow in the slice: not a run of it
                    assert r.blocked is None, f"seed {seed}: the slice blocks at step {step} ({r.blocked})"
                    state = commit(r)
                    last = step == len(res.edges) - 1
                    if r.violated is not None:
                        assert last and res.outcome == "violation" and r.violated == res.violated, \
                            f"seed {seed}: the slice fails {r.violated} at step {step}, the program did not"
                    elif last:
                        assert res.outcome != "violation", f"seed {seed}: the slice misses the violation"
                violations += res.outcome == "violation"
    assert dropped >= programs // 2, (dropped, programs)
    assert violations >= 20


def _counter_program(assertion_on_x: bool):
    """x counts to 3 (what the assertion reads); z counts in a loop of its own under a branch on y (what it does
    not read, unless the assertion is on z)."""
    p = Prog("counter")
    x, y, z = p.var("x", I32), p.var("y", I32), p.var("z", I32)
    n = p.var("n", I32, "nondet")
    p.assign(x, c(0))
    p.assign(z, c(0))
    p.havoc(n)
    p.assign(y, n)
    with p.if_(lt(y, c(5))):
        with p.while_(lt(z, c(10))):
            p.assign(z, add(z, c(1)))
    with p.while_(lt(x, c(3))):
        p.assign(x, add(x, c(1)))
    p.assert_(eq(x, c(3)) if assertion_on_x else ge(z, c(0)))
    return p.build()


def test_slice_drops_what_the_assertion_does_not_depend_on():
    program = _counter_program(assertion_on_x=True)
    sliced, stats = slice_program(program)
    names = {v.name for e in sliced.edges for s in e.stmts if not isinstance(s, Havoc)
             for v in s.reads() | s.writes()}
    assert names == {"x"}
    assert stats.relevant == 1 and stats.kept < stats.statements
    # on z, the branch on y decides whether z's loop runs, so it stays, with y := n
    sliced_z, _ = slice_program(_counter_program(assertion_on_x=False))
    names_z = {v.name for e in sliced_z.edges for s in e.stmts if not isinstance(s, Havoc)
               for v in s.reads() | s.writes()}
    assert names_z == {"z", "y", "n"}


def test_control_dependences_of_a_branch_and_of_a_loop_exit():
    """The loop on z depends on the branch on y; the loop on x's exit edge (taken in the end by every path from
    its head) depends on no branch, nor does the assertion after it."""
    program = _counter_program(assertion_on_x=True)
    at_loc, at_edge = control_dependences(program)

    def branch_on(name):
        return next(e.src for e in program.edges
                    if e.stmts and isinstance(e.stmts[0], Assume) and name in {v.name for v in e.stmts[0].reads()})
    on_y, on_z, on_x = branch_on("y"), branch_on("z"), branch_on("x")
    assert on_y in at_loc[on_z]                       # the loop on z runs only when y < 5
    z_body = next(i for i, e in enumerate(program.edges)
                  if e.src != program.init and any(v.name == "z" for s in e.stmts for v in s.writes()))
    assert at_edge[z_body] == {on_z}
    assertion = next(i for i, e in enumerate(program.edges) if any(isinstance(s, Assert) for s in e.stmts))
    x_exit = next(i for i, e in enumerate(program.edges)
                  if e.src == on_x and e.dst == program.edges[assertion].src)
    assert not at_edge[x_exit] and not at_edge[assertion] and not at_loc[program.exit]


def _solve(engine, program, timeout=20.0):
    return run_engine(engine, program, Task.for_program(program), Run.with_timeout(timeout))


def test_true_of_the_slice_carries_a_proof_checked_on_the_program():
    program = _counter_program(assertion_on_x=True)
    v = _solve(OnSlice(get_engine("spacer")), program)
    assert v.status == Status.TRUE, v.reason
    assert isinstance(v.evidence, TransformedProof) and v.evidence.technique == "slice"
    assert evidence_failure(program, v, False, Deadline.after(20)) is None


def _loop_that_never_ends(fails: bool):
    """k stays 1, so `while (k != 0) w++;` never ends and the assertion after it is never reached; the slice
    (which reads neither k nor w) leaves the loop, and its counterexample must not become a FALSE."""
    p = Prog("endless")
    k, x, w = p.var("k", I32), p.var("x", I32), p.var("w", I32)
    p.assign(k, c(1))
    p.assign(x, c(0))
    p.assign(w, c(0))
    with p.while_(ne(k, c(0))):
        p.assign(w, add(w, c(1)))
    p.assert_(ne(x, c(0)) if fails else eq(x, c(0)))
    return p.build()


def test_counterexample_of_the_slice_that_the_program_cannot_run_is_not_a_false():
    program = _loop_that_never_ends(fails=True)
    sliced, stats = slice_program(program)
    assert stats.kept < stats.statements
    assert _solve(get_engine("bmc"), sliced, 10).status == Status.FALSE      # the slice does fail
    v = _solve(OnSlice(get_engine("bmc")), program, 3)
    assert v.status != Status.FALSE, v.reason
    assert "counterexample" in v.stats.get("stages", [""])[0] or v.stats.get("confirm_bmc"), v.stats


def test_counterexample_of_the_slice_replayed_on_the_program():
    """A real violation found on the slice is a FALSE of the program, its trace on the program's own edges: the
    two parallel edges of the branch on n, alike in the slice (the assertion reads neither y nor the branch), are
    told apart by running the program (n = 4 takes the second)."""
    b = ProgramBuilder("parallel")
    x, y, n = b.declare("x", I32), b.declare("y", I32), b.declare("n", I32, "nondet")
    mid, end = b.new_loc(), b.new_loc()
    b.add_edge(b.init, mid, Havoc((n,)), Assign(x, n))
    b.add_edge(mid, end, Assume(lt(n, c(0))), Assign(y, c(1)))
    b.add_edge(mid, end, Assume(ge(n, c(0))), Assign(y, c(2)))
    exit_loc = b.new_loc()
    b.add_edge(end, exit_loc, Assert(ne(x, c(4))))
    program = b.build(exit_loc)
    sliced, _ = slice_program(program)
    assert sliced.edges[1] == sliced.edges[2] == Edge(mid, end, ())
    v = _solve(OnSlice(get_engine("bmc")), program, 10)
    assert v.status == Status.FALSE, v.reason
    assert v.evidence.validated and v.evidence.inputs == [4]
    assert [st.edge for st in v.evidence.steps] == [program.edges[0], program.edges[2], program.edges[3]]


def test_the_wrapper_refuses_what_its_engine_refuses():
    """A slice is a program of the same kind for the same property: `OnSlice(termination)` must not take an
    unreach-call task that the termination engine refuses (nor run it when the slice drops nothing)."""
    program = _counter_program(assertion_on_x=True)
    task, run_ = Task.for_program(program), Run.with_timeout(5)
    assert get_engine("termination").refuses(task, run_) is not None
    assert OnSlice(get_engine("termination")).refuses(task, run_) == get_engine("termination").refuses(task, run_)
    assert OnSlice(get_engine("bmc")).refuses(task, run_) is None


def _parting_paths(u8_loop: bool):
    """`havoc x, t; if (t > 0) havoc u; havoc w; while (w <= 255) havoc w; i counts to 300; assert(x != 1000)`
    with w a u8, the w loop never ends (found by a review): the slice drops the branch and the loop's condition,
    so its runs may take `havoc u` where the program does not, and leave the w loop. With `u8_loop` False, w is
    an int and the loop ends at a w above 255."""
    p = Prog("parting")
    x, t, u, i = (p.var(n, I32) for n in ("x", "t", "u", "i"))
    w = p.var("w", U8 if u8_loop else I32)
    p.havoc(x, t)
    with p.if_(gt(t, c(0))):
        p.havoc(u)
    p.havoc(w)
    with p.while_(le(cast(I32, w), c(255))):
        p.havoc(w)
    p.assign(i, c(0))
    with p.while_(lt(i, c(300))):
        p.assign(i, add(i, c(1)))
    p.assert_(ne(x, c(1000)))
    return p.build()


def test_a_deep_slice_run_reruns_on_the_program_only_with_values_of_each_havocs_type():
    """The slice run's plan [x = 1000, t = 0, u = 300, w = 7] on the program (t = 0: no `havoc u`) gives w the
    value 300. For a u8 w that is no value a havoc can give: the rerun is refused, as the program never gets
    past the w loop. For an int w it is a run the program can make, and a real violation."""
    from looprover.evidence.deep import RunCounterexample
    from looprover.transforms.slicing import SameEdges
    plan = [1000, 0, 300, 7]
    for u8_loop, real in ((True, False), (False, True)):
        cex = RunCounterexample([], [], {}, True, None, None, length=700, omitted=500, omitted_at=100, plan=plan)
        rerun = SameEdges().trace(cex, _parting_paths(u8_loop), 10.0)
        assert (rerun is not None and rerun.validated) == real, u8_loop
