"""TPA's systems keep only the program variables live at their cutpoints (`tpa/program_ts.py`): a Horn clause's
locals, which the front-end makes program variables, become auxiliaries of Tr. The reduced system must be the
program's: Bad reachable in k steps exactly when the full system reaches it (checked by unrolling both), the
engine's TRUE passes the proof check on the full system, and its FALSE replays on the program."""
from __future__ import annotations

from pathlib import Path

import pytest
import z3

from looprover.deadline import Deadline
from looprover.engines import verify
from looprover.evidence.recheck import recheck_proof
from looprover.jobs import load_program
from looprover.program.cpg import build_cpg
from looprover.smt.cpg_system import CPGSystem
from looprover.smt.systems import loop_system, program_state
from looprover.tpa.options import TPAOptions
from looprover.tpa.program_ts import entry_system, single_loop_system
from looprover.verdict import Status

# one loop whose clauses go through locals, as SeaHorn's Horn files do (`O3_id_o1000`): a counts down from a
# nondet start, b up from 0; the exit clause is bad when both reach their targets together
ONE_LOOP = """(set-logic HORN)
(declare-fun inv (Int Int) Bool)
(assert (forall ((a Int) (t Int) (u Int) (f Bool))
  (=> (and (= t a) (= u 0) (= f (> a 0)) f) (inv t u))))
(assert (forall ((a Int) (b Int) (c Int) (d Int) (g Bool) (e Int) (h Int))
  (=> (and (inv a b) (= c (+ a (- 1))) (= d (+ b 1)) (= g (= c 0)) (not g) (= e c) (= h d)) (inv e h))))
(assert (forall ((a Int) (b Int) (c Int) (d Int))
  (=> (and (inv a b) (= c (+ a (- 1))) (= d (+ b 1)) (= c 0) {bad}) false)))
(check-sat)
"""
UNSAFE = ONE_LOOP.format(bad="(= d 7)")          # a = 7 at the start: b = 6, then the exit with d = 7
SAFE = ONE_LOOP.format(bad="(< d 1)")            # d = b + 1 with b ≥ 0

# two loops in sequence whose bodies define their locals under a guard, as SeaHorn's do: the pc-encoded system
# after the entry step
TWO_LOOPS = """(set-logic HORN)
(declare-fun p (Int Int) Bool)
(declare-fun q (Int Int) Bool)
(assert (forall ((x Int) (y Int)) (=> (and (= x 0) (= y 0)) (p x y))))
(assert (forall ((x Int) (y Int) (c Int) (d Int) (g Bool) (s Int) (t Int))
  (=> (and (p x y) (< x 5) (= g true) (or (not g) (= c (+ x 1))) (or (not g) (= d (+ y 2))) (= s c) (= t d))
      (p s t))))
(assert (forall ((x Int) (y Int) (s Int)) (=> (and (p x y) (>= x 5) (= s (+ y 0))) (q x s))))
(assert (forall ((x Int) (y Int) (c Int) (d Int) (g Bool) (s Int) (t Int))
  (=> (and (q x y) (< x 9) (= g true) (or (not g) (= c (+ x 1))) (or (not g) (= d (+ y 2))) (= s c) (= t d))
      (q s t))))
(assert (forall ((x Int) (y Int)) (=> (and (q x y) (>= x 9) {bad}) false)))
(check-sat)
"""


def _load(tmp_path: Path, text: str):
    f = tmp_path / "p.smt2"
    f.write_text(text)
    return load_program(f)


def _reachable_in(ts, k: int) -> bool:
    s = z3.Solver()
    s.add(ts.at(ts.init, 0), *[ts.trans_at(j) for j in range(k)], ts.at(ts.bad, k))
    return s.check() == z3.sat


@pytest.mark.parametrize("text, depth", [(UNSAFE, 6), (SAFE, None)], ids=["unsafe", "safe"])
def test_the_loop_system_keeps_the_live_variables_and_reaches_bad_as_the_full_one(tmp_path, text, depth):
    sys = CPGSystem(build_cpg(_load(tmp_path, text)))
    ls = single_loop_system(sys, Deadline.after(10))
    every, _, _ = program_state(sys)
    assert ls is not None and len(ls.ts.state) == 2 < len(every)
    assert ls.kept[0] == 0 and [str(sys.ts.state[k]) for k in ls.kept[1:]] == [str(v) for v in ls.ts.state]
    full = loop_system(sys, ls.head, ls.ts.init, ls.ts.bad)      # every program variable, the same Init and Bad
    for k in range(10):
        assert _reachable_in(ls.ts, k) == _reachable_in(full, k), k
        assert _reachable_in(ls.ts, k) == (k == depth), k


@pytest.mark.parametrize("bad, status", [("(= y 18)", Status.FALSE), ("(not (= y (* 2 x)))", Status.TRUE)],
                         ids=["unsafe", "safe"])
def test_the_entry_system_keeps_the_live_variables(tmp_path, bad, status):
    prog = _load(tmp_path, TWO_LOOPS.format(bad=bad))
    sys = CPGSystem(build_cpg(prog))
    start = entry_system(sys, Deadline.after(10))
    assert start is not None and len(start.ts.state) == 3 < len(sys.ts.state)      # pc, x, y
    plain = sys.ts
    for k in range(1, 14):
        assert _reachable_in(plain, k) == _reachable_in(start.ts, k - 1), k
    v = verify("tpa", prog, timeout=30, settings=TPAOptions(loops="single"))     # not the network of the two loops
    assert v.status == status, v.reason
    assert v.stats["system"] == "pc-encoded cutpoint graph after the entry step"
    if status == Status.TRUE:
        assert recheck_proof(prog, v.evidence, False, Deadline.after(30)) is None


@pytest.mark.parametrize("text, status", [(UNSAFE, Status.FALSE), (SAFE, Status.TRUE)], ids=["unsafe", "safe"])
def test_tpa_on_the_live_loop_system(tmp_path, text, status):
    prog = _load(tmp_path, text)
    v = verify("tpa", prog, timeout=30)
    assert v.status == status, v.reason
    assert v.stats["system"].startswith("loop at")
    if status == Status.TRUE:              # the certificate, found over the live variables, holds for all of them
        assert recheck_proof(prog, v.evidence, False, Deadline.after(30)) is None
    else:
        assert v.evidence is not None          # replayed on the program (`evidence.confirm`)


@pytest.mark.parametrize("text, status", [(UNSAFE, Status.FALSE), (SAFE, Status.TRUE)], ids=["unsafe", "safe"])
def test_when_the_live_init_is_not_quick_every_variable_stays(tmp_path, monkeypatch, text, status):
    """Projecting the dead variables out of Init may need real QE: after `LIVE_QE` the system keeps every
    variable, as before the reduction, and the engine's answers are the same."""
    from looprover.smt.mbp import QEError
    from looprover.tpa import program_ts
    calls = []

    def slow_first(*args, **kwargs):
        calls.append(kwargs.get("keep"))
        if len(calls) == 1:
            raise QEError("quantifier elimination failed in time")
        return qe(*args, **kwargs)
    qe = program_ts.qe
    monkeypatch.setattr(program_ts, "qe", slow_first)
    prog = _load(tmp_path, text)
    sys = CPGSystem(build_cpg(prog))
    ls = single_loop_system(sys, Deadline.after(10))
    every, _, _ = program_state(sys)
    assert ls is not None and len(ls.ts.state) == len(every) and ls.kept == list(range(len(sys.ts.state)))
    calls.clear()
    v = verify("tpa", prog, timeout=30)
    assert v.status == status, v.reason
    if status == Status.TRUE:
        assert recheck_proof(prog, v.evidence, False, Deadline.after(30)) is None
