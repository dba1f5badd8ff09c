"""Counterexample replay: the gate every FALSE verdict passes."""
from dataclasses import replace

from helpers import enginecases as ec
from looprover.engines import verify
from looprover.program.expr import I32, ArrayType
from looprover.verdict import Counterexample, Status, TraceStep
from looprover.evidence.replay import replay

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


def _two_inputs_program():
    """x = nondet() - nondet(); a[0] = x; assert(x != 3): two inputs with one C name, on one edge."""
    from looprover.program.cfa import Assert, Assign, Havoc, ProgramBuilder
    from looprover.program.expr import Store, binary, cmp, const
    b = ProgramBuilder("two")
    n1, n2 = (b.declare(n, I32, "nondet", c_name="__VERIFIER_nondet_int()") for n in ("nondet_int", "nondet_int#1"))
    x = b.declare("x", I32)
    a = b.declare("a", ArrayType(I32, I32, 4))
    b.exit = b.new_loc()
    edge = b.add_edge(b.init, b.exit, Havoc((n1,)), Havoc((n2,)), Assign(x, binary("-", n1, n2)),
                      Assign(a, Store(a, const(0, I32), x, a.type)), Assert(cmp("!=", x, const(3, I32))))
    return b.build(), edge


def test_validated_trace_gets_the_values_the_replay_wrote():
    """A trace from a run on inputs (how LABMC's counterexamples come back) records no values; validation
    gives every step the values written, keyed by the IR's unique names, so two inputs read by one statement
    are two values in the report, not one."""
    from looprover.report import counterexample_json, counterexample_lines
    from looprover.evidence.replay import validate
    prog, edge = _two_inputs_program()
    cex = Counterexample([TraceStep(edge, None, {})], [5, 2])
    assert validate(prog, cex).ok and cex.validated
    assert cex.steps[0].values == {"nondet_int": 5, "nondet_int#1": 2, "x": 3, "a[0]": 3}
    shown = counterexample_json(cex, prog)["steps"][0]["values"]
    assert shown == {"__VERIFIER_nondet_int()": 5, "__VERIFIER_nondet_int()#2": 2, "x": 3, "a[0]": 3}
    text = "\n".join(counterexample_lines(cex, prog))
    assert "__VERIFIER_nondet_int() = 5, __VERIFIER_nondet_int() = 2, x = 3, a[0] = 3" in text


def test_labmc_counterexample_shows_values():
    from looprover.frontend.c import load_c_program
    from looprover.report import counterexample_lines
    from pathlib import Path
    prog = load_c_program(Path(__file__).resolve().parents[2] / "examples" / "count_unsafe.c")
    v = verify("labmc", prog, timeout=30)
    assert v.status == Status.FALSE
    assert all(st.values for st in v.evidence.steps if any(s.writes() for s in st.edge.stmts))
    assert "=> x = 2" in "\n".join(counterexample_lines(v.evidence, prog))
