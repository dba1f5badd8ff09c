"""`tpa/program_ts.py`: the single-loop transition system of a C program (Init exactly the loop entry, the
program depth of a loop depth), and no such system for two loops in sequence. The TPA engine on C programs:
tests/engines/test_tpa_c.py."""
from __future__ import annotations

import z3

from looprover.deadline import Deadline
from looprover.program.cpg import build_cpg
from looprover.smt.cpg_system import CPGSystem
from looprover.tpa.program_ts import single_loop_system

from helpers.deep_counter import DEEP, HEADER, load


def test_single_loop_system_shape(tmp_path):
    one = load(tmp_path, DEEP.replace("@N@", "7").replace("@OP@", "=="), "one.c")
    sys1 = CPGSystem(build_cpg(one))
    ls = single_loop_system(sys1, Deadline.after(10))
    assert ls is not None and ls.program_depth(5) == 7
    x, y = ls.ts.state
    s = z3.Solver()
    s.add(ls.ts.init, z3.Not(z3.And(x == 0, y == 0)))
    assert s.check() == z3.unsat                       # Init is exactly the loop entry
    s = z3.Solver()
    s.add(ls.ts.bad, x == 7, y == 14)
    assert s.check() == z3.unsat                       # the right exit state is not bad
    two = load(tmp_path, HEADER + """int main(void) { int i = 0, j = 0;
      while (i < 3) i++; while (j < 3) j++; __VERIFIER_assert(i == j); return 0; }""", "two.c")
    assert single_loop_system(CPGSystem(build_cpg(two)), Deadline.after(10)) is None
