"""Definite answers required where another test accepts UNKNOWN.

Some tests only require "never wrong" (a verdict or UNKNOWN), because the engine they test may give up within
its limit. An engine that always answered UNKNOWN would pass them; the tests here require a definite answer
from an engine that decides the same (or a closely related) program, so it would not pass the suite. The
partner of each tolerant test is named in the docstring; README "Development" lists all pairs.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from helpers.progdsl import Prog, add, lt, ne
from looprover.engines import verify
from looprover.frontend.c import load_c_program
from looprover.frontend.chc import load_chc_program
from looprover.program.expr import U32, const
from looprover.verdict import Status

MODES = pytest.mark.parametrize("bitvector", [False, True], ids=["int", "bv"])


@MODES
@pytest.mark.parametrize("engine", ["bmc", "kinduction", "spacer"])
def test_harmless_wrap_is_proved(tmp_path, engine, bitvector):
    """Partner of engines/test_tpa_c.py::test_harmless_wrap_is_never_a_wrong_answer (TRUE or UNKNOWN from tpa):
    the same program, safe only because of the wrap, is TRUE for BMC (fully unwound), k-induction and Spacer."""
    f = tmp_path / "p.c"
    f.write_text("extern void __assert_fail(void); extern void reach_error(void);\n"
                 "void __VERIFIER_assert(int c) { if (!c) reach_error(); }\n"
                 "extern unsigned int __VERIFIER_nondet_uint(void);\n"
                 """int main(void) {
      unsigned int x = 4294967290u; int i = 0;
      while (i < 10) { x++; i++; }
      __VERIFIER_assert(x < 10u);
      return 0; }""")
    v = verify(engine, load_c_program(f, "ILP32"), timeout=20, bitvector=bitvector)
    assert v.status == Status.TRUE, v.reason


@pytest.mark.parametrize("bad,want", [(11, Status.TRUE), (10, Status.FALSE)])
@pytest.mark.parametrize("engine", ["bmc", "kinduction", "spacer"])
def test_bitvector_counter_is_decided(engine, bad, want):
    """Partner of tpa/test_tpa_core.py::test_bitvector_counter_safe / _unsafe (TPA on the bit-vector system
    x = 0; while (x <u 10) x++; Bad = x == bad: not UNSAFE / not SAFE): the same loop as a program, decided
    in bit-vector mode (by BMC, k-induction and Spacer)."""
    p = Prog("bv_counter")
    x = p.var("x", U32)
    p.assign(x, const(0, U32))
    with p.while_(lt(x, const(10, U32))):
        p.assign(x, add(x, const(1, U32)))
    p.assert_(ne(x, const(bad, U32)))
    prog = p.build()
    v = verify(engine, prog, timeout=20, bitvector=True)
    assert v.status == want, v.reason
    if want == Status.FALSE:
        assert v.evidence.validated


BENCH_COUNTER_SMT2 = """(set-logic HORN)
(declare-fun inv (Int) Bool)
(assert (forall ((x Int)) (=> (= x 0) (inv x))))
(assert (forall ((x Int) (y Int)) (=> (and (inv x) (< x 5) (= y (+ x 1))) (inv y))))
(assert (forall ((x Int)) (=> (and (inv x) (> x 5)) false)))
"""


@pytest.mark.parametrize("engine", ["kinduction", "tpa", "spacer"])
def test_bench_counter_is_proved(tmp_path, engine):
    """Partner of bench/test_bench.py::test_bench_command_end_to_end (its one CHC task, counter.smt2 -- the
    text above -- may be TRUE or UNKNOWN there): proved by k-induction, TPA and Spacer."""
    f = tmp_path / "counter.smt2"
    f.write_text(BENCH_COUNTER_SMT2)
    v = verify(engine, load_chc_program(f), timeout=20)
    assert v.status == Status.TRUE, v.reason


@pytest.mark.parametrize("task, status", [("loop-acceleration/const_1-1", "TRUE"),
                                          ("loops/count_up_down-2", "FALSE")])
def test_shared_svcomp_tasks_with_bmc(shared_dir, task, status):
    """Partner of cli/test_cli.py::test_shared_svcomp_tasks (the portfolio: the expected status or UNKNOWN on a
    slow machine): the same tasks through the same command line, decided by BMC alone."""
    r = subprocess.run([sys.executable, "-m", "looprover", "verify",
                        str(shared_dir / "benchmarks" / "svcomp" / f"{task}.yml"), "--engine", "bmc", "--json",
                        "--timeout", "60"], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["status"] == status, data


def test_shared_velroyen_is_false(shared_dir):
    """Partner of cli/test_cli.py::test_shared_termination_task (FALSE or UNKNOWN there, through the CLI and
    the portfolio): the termination engine decides the task's program (LP64; it runs forever from
    30 < x <= 35 and from -5 <= x < 0)."""
    from looprover.engines.base import Task
    from looprover.properties import Property
    prog = load_c_program(shared_dir / "benchmarks/svcomp/termination-crafted-lit/Velroyen.c", "LP64")
    v = verify("termination", prog, Task(Property("termination")), timeout=30)
    assert v.status == Status.FALSE and v.evidence.validated, v.reason
