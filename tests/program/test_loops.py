"""Loop structure (natural loops, nesting, exits, irreducibility, cutpoints) and the cutpoint graph."""
import pytest

from looprover.program.cfa import Assert, Assign, Assume, ProgramBuilder
from looprover.program.cpg import ERROR, build_cpg
from looprover.program.expr import I32, TRUE, not_
from looprover.program.loops import analyze_loops

from helpers.progdsl import Prog, add, c, eq, lt, ne


def nested():
    p = Prog("nested")
    i, j, s = p.var("i", I32), p.var("j", I32), p.var("s", I32)
    p.assign(i, c(0))
    with p.while_(lt(i, c(3))) as outer:
        p.assign(j, c(0))
        with p.while_(lt(j, c(3))) as inner:
            p.assign(s, add(s, c(1)))
            p.assign(j, add(j, c(1)))
        p.assign(i, add(i, c(1)))
    p.assert_(ne(s, c(9)))
    return p.build(), outer, inner


def test_nesting_forest():
    prog, outer, inner = nested()
    f = analyze_loops(prog)
    assert set(f.loops) == {outer, inner}
    assert f.roots == (outer,)
    assert f.order == (inner, outer)              # innermost first
    lo, li = f.loops[outer], f.loops[inner]
    assert li.parent == outer and lo.children == (inner,)
    assert (lo.depth, li.depth) == (1, 2)
    assert li.body < lo.body
    assert f.chain(inner) == (outer, inner)
    assert f.loop_of(inner) is li
    assert {v.name for v in li.writes} == {"s", "j"}
    assert {v.name for v in lo.writes} == {"i", "j", "s"}   # includes the inner loop
    assert {v.name for v in lo.reads} >= {"i", "j", "s"}
    assert len(lo.back_edges) == 1 and len(lo.entry_edges) == 1 and len(lo.exit_edges) == 1
    assert not f.irreducible
    assert f.cutpoints == {outer, inner}
    assert f.dominates(outer, inner) and not f.dominates(inner, outer)


def test_break_gives_multiple_exits_and_continue_merges_back_edges():
    p = Prog("bc")
    x = p.var("x", I32)
    with p.while_(None) as head:
        p.assign(x, add(x, c(1)))
        with p.if_(eq(x, c(5))):
            p.break_()
        with p.if_(eq(x, c(3))):
            p.continue_()
        p.assign(x, add(x, c(1)))
    prog = p.build()
    f = analyze_loops(prog)
    assert set(f.loops) == {head}
    lp = f.loops[head]
    assert len(lp.back_edges) == 2             # the continue and the normal end of the body
    assert len(lp.exit_edges) == 2             # the loop condition and the break
    assert len(lp.exits) == 2                  # the break block itself is outside the natural loop


def test_self_loop_and_unreachable_loop_ignored():
    b = ProgramBuilder("self")
    x = b.declare("x", I32)
    l1, l2, dead = b.new_loc(), b.new_loc(), b.new_loc()
    b.add_edge(b.init, l1)
    b.add_edge(l1, l1, Assign(x, add(x, c(1))))
    b.add_edge(l1, l2, Assume(eq(x, c(3))))
    b.add_edge(dead, dead)                      # an unreachable self loop
    prog = b.build(exit_loc=l2)
    f = analyze_loops(prog)
    assert set(f.loops) == {l1}
    assert f.loops[l1].body == {l1}
    assert dead not in f.reachable


def irreducible():
    """A cycle l1 <-> l2 entered at both l1 and l2 (goto into a loop)."""
    b = ProgramBuilder("irr")
    x = b.declare("x", I32)
    l1, l2, out = b.new_loc(), b.new_loc(), b.new_loc()
    b.add_edge(b.init, l1, Assume(lt(x, c(0))))
    b.add_edge(b.init, l2, Assume(not_(lt(x, c(0)))))
    b.add_edge(l1, l2, Assign(x, add(x, c(1))))
    b.add_edge(l2, l1, Assume(lt(x, c(10))))
    b.add_edge(l2, out, Assume(not_(lt(x, c(10)))), Assert(ne(x, c(5))))
    return b.build(exit_loc=out), l1, l2


def test_irreducible_is_reported_and_cut():
    prog, l1, l2 = irreducible()
    f = analyze_loops(prog)
    assert f.irreducible
    assert not f.loops                          # no natural loop: neither location dominates the other
    assert f.cutpoints & {l1, l2}               # the cycle is cut
    cpg = build_cpg(prog, f)                    # the cutpoint graph still works (fragments are DAGs)
    assert set(cpg.fragments) == {prog.init, *f.cutpoints}


def test_cpg_fragments_and_error_edges():
    prog, outer, inner = nested()
    cpg = build_cpg(prog)
    assert cpg.cutpoints == tuple(sorted((outer, inner)))
    assert cpg.nodes[0] == prog.init and cpg.nodes[-1] == ERROR
    targets = {n: set(cpg.fragment(n).targets) for n in cpg.sources}
    assert targets[prog.init] == {outer}
    assert targets[outer] == {inner, prog.exit}
    assert targets[inner] == {inner, outer}     # back to itself, or out to the outer head
    err = [e for e in cpg.edges if e.dst == ERROR]
    assert [e.src for e in err] == [outer]      # the assert after the outer loop is in outer's fragment
    assert err[0].asserts and isinstance(err[0].asserts[0][1], Assert)
    self_edge = next(e for e in cpg.out_edges(inner) if e.dst == inner)
    assert all(e.src != e.dst or e.src == inner for e in self_edge.edges)
    # every fragment edge list is topologically ordered
    for n in cpg.sources:
        frag = cpg.fragment(n)
        pos = {l: i for i, l in enumerate(frag.locs)}
        assert all(pos[e.src] <= pos.get(e.dst, 10**9) or e.dst == n for e in frag.edges)


def test_cpg_of_loop_free_program():
    b = ProgramBuilder("lf")
    x = b.declare("x", I32)
    l1 = b.new_loc()
    b.add_edge(b.init, l1, Assign(x, c(1)), Assert(eq(x, c(1))))
    prog = b.build(exit_loc=l1)
    cpg = build_cpg(prog)
    assert cpg.cutpoints == ()
    assert {(e.src, e.dst) for e in cpg.edges} == {(prog.init, l1), (prog.init, ERROR)}
    assert cpg.is_terminal(l1) and cpg.is_terminal(ERROR)


def test_assume_true_edge_kept():
    b = ProgramBuilder("t")
    l1 = b.new_loc()
    b.add_edge(b.init, l1, Assume(TRUE))
    prog = b.build(exit_loc=l1)
    assert analyze_loops(prog).loops == {}


@pytest.mark.parametrize("seed", range(60))
def test_immediate_dominators_agree_with_networkx_on_random_graphs(seed):
    """Our dominator computation (the one graph algorithm the loop analysis needs) against networkx's."""
    import random

    import networkx as nx

    from looprover.program.loops import immediate_dominators
    rng = random.Random(seed)
    n = rng.randint(1, 14)
    succ = {v: sorted({rng.randrange(n) for _ in range(rng.randint(0, 3))}) for v in range(n)}
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from((v, w) for v, ws in succ.items() for w in ws)
    expected = {v: d for v, d in nx.immediate_dominators(g, 0).items() if v != 0}
    assert immediate_dominators(succ, 0) == expected
