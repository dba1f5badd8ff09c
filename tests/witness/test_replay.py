"""Counterexample replay: the gate every FALSE verdict passes."""
from dataclasses import replace

from helpers import enginecases as ec
from looprover.engines import verify
from looprover.program.expr import I32, ArrayType
from looprover.verdict import Counterexample, Status, TraceStep
from looprover.witness.replay import replay

from helpers.progdsl import Prog, add, c, gt, lt, ne, sel


def test_long_array_trace_replays_quickly():
    """2*10^5 steps with an array store each: replay updates arrays in place (linear time)."""
    n = 100_000
    p = Prog("long")
    x, a = p.var("x", I32), p.var("a", ArrayType(I32, I32, n))
    p.assign(x, c(0))
    with p.while_(lt(x, c(n))):
        p.store(a, x, x)
        p.assign(x, add(x, c(1)))
    p.assert_(ne(sel(a, c(n - 1)), c(n - 1)))
    prog = p.build()
    # the trace: the loop n times, then the exit edge with the failing assert
    edges = prog.edges
    init, head = edges[0], edges[0].dst
    into = next(e for e in prog.out_edges(head) if e.stmts and "<" in str(e.stmts[0].cond)
                and "!" not in str(e.stmts[0].cond))
    out = next(e for e in prog.out_edges(head) if e is not into)
    back = prog.out_edges(into.dst)[0]
    final = prog.out_edges(out.dst)[0]
    trace = [init] + [into, back] * n + [out, final]
    cex = Counterexample([TraceStep(e, e.src_loc) for e in trace], [])
    res = replay(prog, cex)
    assert res.ok and res.steps == len(trace)


def test_plain_counterexample_uses_inputs():
    prog = ec.loopfree(False)
    v = verify("bmc", prog, timeout=10)
    plain = Counterexample(v.evidence.steps, [4], v.evidence.initial)
    assert replay(prog, plain).ok
    wrong = Counterexample(v.evidence.steps, [5], v.evidence.initial)
    res = replay(prog, wrong)
    assert not res.ok and ("blocked" in res.reason or "without" in res.reason)


def test_tampered_trace_is_refused():
    prog = ec.deep_bug()
    cex = verify("bmc", prog, timeout=10).evidence
    short = replace(cex, steps=cex.steps[:-3])
    assert not replay(prog, short).ok
    skipped = replace(cex, steps=cex.steps[:2] + cex.steps[3:])
    assert not replay(prog, skipped).ok


def test_signed_overflow_trace_is_refused():
    """x = INT_MAX; x = x + 1; assert(x > 0): with wrap-around the assert fails, but only through undefined
    behaviour; the bit-vector BMC finds the trace and the replay refuses it."""
    p = Prog("ovf")
    x = p.var("x", I32)
    p.assign(x, c(2**31 - 1))
    p.assign(x, add(x, c(1)))
    p.assert_(gt(x, c(0)))
    prog = p.build()
    assert verify("bmc", prog, timeout=10).status == Status.TRUE       # integer semantics
    v = verify("bmc", prog, timeout=10, bitvector=True)
    assert v.status == Status.UNKNOWN and "overflow" in v.reason


def test_evidence_is_picklable():
    import pickle
    prog = ec.array_nondet(False)
    v = verify("bmc", prog, timeout=10)
    assert v.status == Status.FALSE
    again = pickle.loads(pickle.dumps(v.evidence))     # no z3 objects left in the evidence
    assert replay(prog, again).ok
