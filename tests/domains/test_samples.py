"""The state sampler: random runs of the interpreter, with z3 choosing havoc values where random ones block."""
from __future__ import annotations

from helpers.progdsl import Prog, add, c, eq, ge, lt, mul
from looprover.domains import sample_states
from looprover.domains import samples as samples_module
from looprover.program.cpg import build_cpg
from looprover.program.expr import I32


def _pinned():
    """x starts at 10·k for a nondet k in 1..9, and each round y is havocked and then pinned to x + 3: random
    values of k, x and y (small numbers) almost never pass these assumptions."""
    p = Prog("pinned")
    k, x, y, i = (p.var(n, I32) for n in ("k", "x", "y", "i"))
    p.havoc(k, x)
    p.assume(ge(k, c(1)))
    p.assume(lt(k, c(10)))
    p.assume(eq(x, mul(c(10), k)))
    p.assign(i, c(0))
    with p.while_(lt(i, c(20))):
        p.havoc(y)
        p.assume(eq(y, add(x, c(3))))
        p.assign(i, add(i, c(1)))
    return p.build()


def test_samples_pass_assumptions_that_pin_havocked_values():
    prog = _pinned()
    head = next(iter(build_cpg(prog).loops.loops))
    samples = sample_states(prog, {head})[head]
    assert len(samples) >= 20
    for s in samples:   # every sample is a reachable state: x = 10·k, 1 <= k <= 9, and y = x + 3 after a round
        assert s["x"] == 10 * s["k"] and 1 <= s["k"] <= 9
        assert s["i"] == 0 or s["y"] == s["x"] + 3
    assert len({s["k"] for s in samples}) >= 2        # the runs spread out


def _behind_a_long_loop():
    """i counts to 2000 (about 4000 interpreter steps, beyond a short run), then j counts down from i."""
    p = Prog("behind")
    i, j = p.var("i", I32), p.var("j", I32)
    p.assign(i, c(0))
    with p.while_(lt(i, c(2000))):
        p.assign(i, add(i, c(1)))
    p.assign(j, i)
    with p.while_(lt(c(0), j)):
        p.assign(j, add(j, c(-1)))
    return p.build()


def test_a_loop_behind_a_long_loop_gets_samples_from_long_runs(monkeypatch):
    """Without samples there, contradictory candidates reach Houdini and make every set vacuously inductive."""
    prog = _behind_a_long_loop()
    heads = set(build_cpg(prog).loops.loops)
    samples = sample_states(prog, heads)
    assert all(samples[h] for h in heads)
    second = next(h for h in heads if all(s["i"] == 2000 for s in samples[h]))
    assert all(0 <= s["j"] <= 2000 for s in samples[second])       # reachable states only
    monkeypatch.setattr(samples_module, "LONG_RUNS", 0)
    assert not sample_states(prog, heads)[second]                   # the short runs alone never get there


def test_a_havoc_after_an_assertion_on_a_solved_edge_gets_a_value():
    """z3 solves an edge's havocs up to its first assertion; a havoc after one that holds (the string
    terminators' next cell, `transforms/strings.py`) takes a random value instead of crashing the sampler."""
    p = Prog("after_assert")
    x, y, z, i = (p.var(n, I32) for n in ("x", "y", "z", "i"))
    p.havoc(x)
    p.assign(i, c(0))
    with p.while_(lt(i, c(20))):
        p.havoc(y)
        p.assume(eq(y, add(x, c(3))))       # random values of y almost never pass: z3 picks y
        p.assert_(ge(y, add(x, c(3))))
        p.havoc(z)
        p.assign(i, add(i, c(1)))
    prog = p.build()
    head = next(iter(build_cpg(prog).loops.loops))
    samples = sample_states(prog, {head})[head]
    assert any(s["i"] > 0 for s in samples)
    assert all(s["i"] == 0 or s["y"] == s["x"] + 3 for s in samples)


def test_inputs_are_sometimes_the_programs_constants(monkeypatch):
    """A scan that branches on a character (`ch == ','`, 44; an int, as getchar's) reaches the loop behind that
    branch only with such an input: small random numbers never are 44, and the else branch always runs, so z3
    is never asked."""
    p = Prog("scan")
    i, j, ch = (p.var(n, I32) for n in ("i", "j", "ch"))
    p.assign(i, c(0))
    with p.while_(lt(i, c(50))):
        p.havoc(ch)
        with p.if_(eq(ch, c(44))):
            p.assign(j, c(0))
            with p.while_(lt(j, i)):
                p.assign(j, add(j, c(1)))
        p.assign(i, add(i, c(1)))
    prog = p.build()
    heads = set(build_cpg(prog).loops.loops)
    inner = max(heads)
    assert sample_states(prog, heads)[inner]
    assert all(0 <= s["j"] <= s["i"] for s in sample_states(prog, heads)[inner])
    monkeypatch.setattr(samples_module, "CONSTANT_SHARE", 0.0)
    assert not sample_states(prog, heads)[inner]


def _behind_a_square():
    """The loop runs only when x·x = 1369 (x = ±37): small random inputs, the program's constants and the rare
    type extremes all miss it, and an edge that random values cannot run has a sibling they can."""
    p = Prog("square")
    x, i = p.var("x", I32), p.var("i", I32)
    p.havoc(x)
    p.assign(i, c(0))
    with p.if_(eq(mul(x, x), c(1369))):
        with p.while_(lt(i, c(5))):
            p.assign(i, add(i, c(1)))
    return p.build()


def test_a_point_no_random_run_reaches_gets_states_from_paths_z3_finds():
    from looprover.deadline import Deadline
    from looprover.smt.cpg_system import CPGSystem
    prog = _behind_a_square()
    cpg = build_cpg(prog)
    head = next(iter(cpg.loops.loops))
    assert not sample_states(prog, {head})[head]
    samples = sample_states(prog, {head}, system=CPGSystem(cpg), deadline=Deadline.after(30))[head]
    assert samples
    assert all(s["x"] * s["x"] == 1369 and 0 <= s["i"] <= 5 for s in samples)     # reachable states only
    assert len({s["i"] for s in samples}) > 1              # and the random run on from there
