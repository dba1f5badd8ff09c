"""`smt/nowrap.py`: splitting a transition relation into its wrap-free part and the wrap states."""
from __future__ import annotations

import z3

from helpers import enginecases as ec
from helpers.wrap_chain import wrap_step
from looprover.deadline import Deadline
from looprover.program.cpg import build_cpg
from looprover.smt.cpg_system import CPGSystem
from looprover.smt.nowrap import split_wraps


def test_split_wraps_agrees_with_the_exact_relation_off_the_wrap_states():
    prog = ec.uchar_overflow_bug()
    sys = CPGSystem(build_cpg(prog))
    ts = sys.ts
    split = split_wraps(ts.trans, ts.state, Deadline.after(5.0))
    assert split is not None
    plain, wrap_bad = split
    # Tr_nw ⊆ Tr, and every Tr-step from a non-wrap state is a Tr_nw step
    s = z3.Solver()
    s.add(plain, z3.Not(ts.trans))
    assert s.check() == z3.unsat
    s = z3.Solver()
    s.add(ts.trans, z3.Not(wrap_bad), z3.Not(plain))
    assert s.check() == z3.unsat
    # and the wrap states are real: c = 255 and a loop step is one
    s = z3.Solver()
    s.add(wrap_bad)
    assert s.check() == z3.sat


def test_no_wrap_terms_no_split():
    x, x1 = z3.Ints("x x'")
    assert split_wraps(z3.And(x < 10, x1 == x + 1), [x], Deadline.after(1.0)) is None


def test_only_the_moduli_of_c_integer_widths_are_wraps():
    """A Horn file's `(mod x 4)` or a clamp to [0, 9] is arithmetic, not a wrap: splitting it off only made TPA
    run twice (the wrap-free run reaches the "wrap" at once, then the exact one starts)."""
    x, x1 = z3.Ints("x x'")
    assert split_wraps(z3.And(x1 == (x + 1) % 4), [x], Deadline.after(1.0)) is None
    assert split_wraps(z3.And(x1 == z3.If(z3.And(x + 1 >= 0, x + 1 <= 9), x + 1, 0)), [x],
                       Deadline.after(1.0)) is None
    assert split_wraps(z3.And(x1 == (x + 1) % 256), [x], Deadline.after(1.0)) is not None
    assert split_wraps(z3.And(x1 == z3.If(z3.And(x + 1 >= 0, x + 1 <= 4294967295), x + 1, 0)), [x],
                       Deadline.after(1.0)) is not None


def test_wrap_states_of_twenty_chained_additions_are_found():
    """The wrap states' QE ran past any limit inside z3 (issue 14: tpa on 20 `y += 3u` lines took 102 s on a
    10 s limit); now it is answered, and exactly."""
    trans, _, pc = wrap_step(20)
    split = split_wraps(trans, [pc], Deadline.after(10.0))
    assert split is not None
    s = z3.Solver()
    s.add(split[1] != (pc == 0))
    assert s.check() == z3.unsat
