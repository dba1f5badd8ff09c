"""Variable classification (IO / pure output / input), the abstract-loop bound, liveness."""
from __future__ import annotations

from looprover.program.expr import BOOL, I32, ArrayType, Store
from looprover.program.loops import analyze_loops
from looprover.program.liveness import liveness
from looprover.transforms.classify import abstract_bound, classify
from looprover.transforms.labmc import abstract

from helpers.progdsl import Prog, add, c, eq, ge, lt, ne, sel


def _classify(prog, header_index=0):
    forest = analyze_loops(prog)
    h = sorted(forest.loops)[header_index]
    return classify(prog, forest.loops[h], liveness(prog))


def names(vs):
    return {v.name for v in vs}


def test_upward_exposed_use_makes_io_and_write_first_makes_po():
    """while (i < n) { t = i * 2; s = s + t; i++ }  ->  i, s IO; t PO; n input."""
    p = Prog()
    i, s, t, n = p.var("i", I32), p.var("s", I32), p.var("t", I32), p.var("n", I32, "nondet")
    p.havoc(n)
    p.assign(i, c(0))
    p.assign(s, c(0))
    with p.while_(lt(i, n)):
        p.assign(t, add(i, i))
        p.assign(s, add(s, t))
        p.assign(i, add(i, c(1)))
    p.assert_(ge(s, c(0)))
    cls = _classify(p.build())
    assert names(cls.io) == {"i", "s"}
    assert names(cls.po) == {"t"}
    assert names(cls.inputs) == {"n"}
    assert names(cls.po_live) == set()          # t is dead after the loop
    assert cls.bound == 1


def test_use_only_in_loop_condition_is_io():
    """while (x != 3) { x = 3; }: x is written before any body read, but the condition reads it."""
    p = Prog()
    x = p.var("x", I32)
    p.havoc(x)
    with p.while_(ne(x, c(3))):
        p.assign(x, c(3))
    prog = p.build()
    cls = _classify(prog)
    assert names(cls.io) == {"x"}


def test_conditional_write_then_read_is_io():
    """while (*) { if (b) y = 1; z = y; }: y is not written on every path before its read."""
    p = Prog()
    y, z, b = p.var("y", I32), p.var("z", I32), p.var("b", BOOL, "nondet")
    with p.while_(None):
        p.havoc(b)
        with p.if_(b):
            p.assign(y, c(1))
        p.assign(z, y)
    p.assert_(ne(z, c(5)))
    cls = _classify(p.build())
    assert names(cls.io) == {"y"}
    assert names(cls.po) == {"z", "b"}
    assert names(cls.po_live) == {"z"}
    # z is written by every complete iteration and the loop is only left at its header: the final
    # iteration is z's last writer, M = 1
    assert names(cls.po_always) == {"z"} and not cls.partial_exit and cls.bound == 1


def test_break_and_continue_paths():
    """while (i < 10) { i++; if (i == 3) continue; p = i; if (p == 7) break; }  p is PO (written before its
    read on every path that reads it); i is IO; the continue path returns without writing p."""
    p = Prog()
    i, q = p.var("i", I32), p.var("p", I32)
    p.assign(i, c(0))
    with p.while_(lt(i, c(10))):
        p.assign(i, add(i, c(1)))
        with p.if_(eq(i, c(3))):
            p.continue_()
        p.assign(q, i)
        with p.if_(eq(q, c(7))):
            p.break_()
    p.assert_(ne(q, c(9)))
    cls = _classify(p.build())
    assert names(cls.io) == {"i"}
    assert names(cls.po) == {"p"}
    assert names(cls.po_live) == {"p"}
    assert names(cls.po_always) == set()          # the continue path does not write p
    assert cls.partial_exit and cls.po_edges == 1 and cls.bound == 2


def test_nested_loop_classified_after_inner_abstraction():
    """for (i..n) { s2 = 0; for (j..m) s2 += j; t = s2; }: inner: j, s2 IO. Outer (after the inner loop is
    abstract): s2 and j are written before read in each outer iteration -> PO; i IO."""
    p = Prog()
    i, j, s2, t = p.var("i", I32), p.var("j", I32), p.var("s2", I32), p.var("t", I32)
    n, m = p.var("n", I32, "nondet"), p.var("m", I32, "nondet")
    p.havoc(n)
    p.havoc(m)
    p.assign(i, c(0))
    with p.while_(lt(i, n)):
        p.assign(s2, c(0))
        p.assign(j, c(0))
        with p.while_(lt(j, m)):
            p.assign(s2, add(s2, j))
            p.assign(j, add(j, c(1)))
        p.assign(t, s2)
        p.assign(i, add(i, c(1)))
    p.assert_(ne(t, c(-1)))
    res = abstract(p.build())
    inner, outer = res.loops
    assert names(inner.classification.io) == {"j", "s2"}
    assert names(outer.classification.io) == {"i"}
    assert {"j", "s2", "t"} <= names(outer.classification.po)
    assert names(outer.classification.po_live) == {"t"}
    # the inner loop's counter and acceleration variables are pure outputs of the outer loop, dead after it
    assert any(v.startswith("labmc_cnt") for v in names(outer.classification.po))


def test_written_array_is_io_and_havocked():
    """for (i..n) a[i] = 0;  a store reads the array, so a is IO; it is havocked (no closed form)."""
    p = Prog()
    at = ArrayType(I32, I32, 10)
    a, i, n = p.var("a", at), p.var("i", I32), p.var("n", I32, "nondet")
    p.havoc(n)
    p.assign(i, c(0))
    with p.while_(lt(i, n)):
        p.assign(a, Store(a, i, c(0), at))
        p.assign(i, add(i, c(1)))
    p.assert_(eq(sel(a, c(0)), c(0)))
    res = abstract(p.build())
    rep = res.loops[0]
    assert names(rep.classification.io) == {"a", "i"}
    assert rep.havocked == ["a"]
    assert rep.accelerated == {"i": "linear"}


def test_read_only_array_is_input():
    p = Prog()
    at = ArrayType(I32, I32, 10)
    a, i, s = p.var("a", at), p.var("i", I32), p.var("s", I32)
    p.assign(i, c(0))
    with p.while_(lt(i, c(10))):
        p.assign(s, sel(a, i))
        p.assign(i, add(i, c(1)))
    p.assert_(ne(s, c(1)))
    cls = _classify(p.build())
    assert names(cls.inputs) == {"a"}
    assert names(cls.po) == {"s"}


def test_bound_formula():
    assert abstract_bound(0, 0, False) == 1
    assert abstract_bound(3, 1, False) == 2     # three POs written on one edge: one last writer
    assert abstract_bound(2, 5, False) == 3
    assert abstract_bound(0, 0, True) == 2      # last complete iteration + partial final one
