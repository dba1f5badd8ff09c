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


# two loops, a nondeterministic choice per step (z) and an input read in a guard: the per-step formulas differ
TWO_LOOPS = """(set-logic HORN)
(declare-fun p (Int Int) Bool)
(declare-fun q (Int Int) Bool)
(assert (forall ((x Int) (y Int)) (=> (= x 0) (p x y))))
(assert (forall ((x Int) (y Int) (z Int) (x1 Int) (y1 Int))
  (=> (and (p x y) (< x 5) (= x1 (+ x (ite (> z 0) 1 2))) (= y1 (ite (> z 0) y (- y z)))) (p x1 y1))))
(assert (forall ((x Int) (y Int)) (=> (and (p x y) (>= x 5)) (q x y))))
(assert (forall ((x Int) (y Int) (x1 Int)) (=> (and (q x y) (> y x) (= x1 (- x 1))) (q x1 y))))
(assert (forall ((x Int) (y Int)) (=> (and (q x y) (< x 0)) false)))
(check-sat)
"""


def test_the_unrolling_specialised_to_the_pinned_nodes_is_the_same_query(tmp_path):
    """Property (seeded random pc sequences, possible or not): under the pins that fix every step's node, each
    step's Tr specialised to its pair of nodes (`confirm._unrolling`) is equivalent to the plain `trans_at`."""
    import random
    from looprover.evidence.confirm import _unrolling
    f = tmp_path / "two.smt2"
    f.write_text(TWO_LOOPS)
    sys = CPGSystem(build_cpg(load_program(f)))
    nodes = list(sys.pc_id)
    rng = random.Random(3)
    for _ in range(20):
        pcs = [rng.choice(nodes) for _ in range(rng.randint(2, 7))]
        steps = len(pcs) - 1
        pins = [sys.pc_at(j) == sys.pc_id[v] for j, v in enumerate(pcs)]
        plain, special = _unrolling(sys, None)(steps), _unrolling(sys, pcs)(steps)
        s = z3.Solver()
        s.add(*pins, z3.And(plain) != z3.And(special))
        assert s.check() == z3.unsat, pcs
