"""The one Houdini (smt/houdini.py): initiation, consecution relative to the survivors, the greatest fixed point."""
from __future__ import annotations

import z3

from looprover.deadline import Deadline
from looprover.smt.houdini import houdini


def test_keeps_the_largest_inductive_subset():
    x, y, x1, y1 = z3.Ints("x y x1 y1")
    trans = z3.And(x1 == x + 1, y1 == y + x)
    cands = [x >= 0, y >= 0, x <= 10, y == 0]
    post = [z3.substitute(c, (x, x1), (y, y1)) for c in cands]
    # y >= 0 is inductive only together with x >= 0; x <= 10 is not inductive; y == 0 fails from the start
    alive = houdini([trans], cands, post, Deadline.after(10), init=z3.And(x == 0, y == 1))
    assert alive == [0, 1]


def test_relative_to_survivors_drops_dependents():
    x, y, x1, y1 = z3.Ints("x y x1 y1")
    trans = z3.And(x1 == x - 1, y1 == y + x)
    cands = [x >= 0, y >= 0]              # x >= 0 fails, and y >= 0 needs it
    post = [z3.substitute(c, (x, x1), (y, y1)) for c in cands]
    assert houdini([trans], cands, post, None) == []
    assert houdini([trans], [], [], None) == []
