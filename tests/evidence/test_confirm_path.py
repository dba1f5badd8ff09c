"""`evidence/confirm.confirm_cpg_path`: a path whose exact BMC query is left unknown is run from its prefix
instead when it has one (a deep loop), and stays unconfirmed when it has none."""
from __future__ import annotations

from pathlib import Path

import z3

from looprover.deadline import Deadline
from looprover.evidence.confirm import confirm_loop_path
from looprover.jobs import load_program
from looprover.program.cpg import ERROR, build_cpg
from looprover.smt.cpg_system import CPGSystem

# one loop of 150 iterations, then the query fails: the violating path is (p, 150), (ERROR, 0) after the entry
HORN = """(set-logic HORN)
(declare-fun p (Int) Bool)
(assert (forall ((x Int)) (=> (= x 0) (p x))))
(assert (forall ((x Int) (x1 Int)) (=> (and (p x) (< x 150) (= x1 (+ x 1))) (p x1))))
(assert (forall ((x Int)) (=> (and (p x) (>= x 150)) false)))
(check-sat)
"""


class _Unknown:
    """A solver that answers `unknown`, as an exact query that ran out of its time would."""

    def __init__(self, inner):
        self.inner = inner

    def add(self, *fs):
        self.inner.add(*fs)

    def check(self, *a):
        return z3.unknown

    def why_unknown(self):
        return "timeout"


def _path(tmp_path: Path):
    f = tmp_path / "deep.smt2"
    f.write_text(HORN)
    program = load_program(f)
    sys = CPGSystem(build_cpg(program))
    head = sys.cpg.cutpoints[0]
    return program, sys, [(sys.cpg.init, 0), (head, 150), (ERROR, 0)]


def _first_query_unknown(monkeypatch, sys):
    made = []
    real = sys.enc.solver

    def solver(deadline=None):
        s = real(deadline)
        made.append(s)
        return _Unknown(s) if len(made) == 1 else s
    monkeypatch.setattr(sys.enc, "solver", solver)
    return made


def test_an_unknown_exact_query_falls_back_to_running_the_deep_loop(tmp_path, monkeypatch):
    program, sys, path = _path(tmp_path)
    made = _first_query_unknown(monkeypatch, sys)
    c = confirm_loop_path(program, sys, path, Deadline.after(30), False, replay_limit=2000, deep_loop=100)
    assert c.ok and c.deep, c.why
    assert len(made) == 2


def test_without_a_deep_loop_an_unknown_exact_query_stays_unconfirmed(tmp_path, monkeypatch):
    program, sys, path = _path(tmp_path)
    _first_query_unknown(monkeypatch, sys)
    c = confirm_loop_path(program, sys, path, Deadline.after(30), False, replay_limit=2000, deep_loop=1000)
    assert not c.ok and "unknown (timeout)" in c.why


def test_the_exact_query_confirms_when_it_answers(tmp_path):
    program, sys, path = _path(tmp_path)
    c = confirm_loop_path(program, sys, path, Deadline.after(30), False, replay_limit=2000, deep_loop=100)
    assert c.ok and not c.deep
