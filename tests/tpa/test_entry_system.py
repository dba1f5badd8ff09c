"""`tpa/program_ts.EntrySystem`: the pc-encoded system started after its entry step. Equivalent to the plain
system one step later (checked by unrolling both), the TPA engine proves a two-loop Horn system with it and
refutes the unsafe twin with a replayed counterexample, and its proof is checked, not trusted."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import z3

from looprover.deadline import Deadline
from looprover.engines import verify
from looprover.evidence.recheck import recheck_proof
from looprover.jobs import load_program
from looprover.program.cpg import build_cpg
from looprover.smt.cpg_system import CPGSystem
from looprover.smt.text import to_text
from looprover.tpa.options import TPAOptions
from looprover.tpa.program_ts import entry_system, single_loop_system
from looprover.tpa.proof import TransitionInvariantProof
from looprover.verdict import Status

# two loops in sequence, each x += 1, y += 2 for a while: y = 2x throughout, which no loop edge can learn
# relationally from the plain system (its entry edge sets x = y = 0 and breaks y' - y = 2(x' - x))
TWO_LOOPS = """(set-logic HORN)
(declare-fun p (Int Int Int) Bool)
(declare-fun q (Int Int Int) Bool)
(assert (forall ((c Int) (x Int) (y Int)) (=> (and (= c 0) (= x 0) (= y 0)) (p c x y))))
(assert (forall ((c Int) (x Int) (y Int) (c1 Int) (x1 Int) (y1 Int))
  (=> (and (p c x y) (< c {n}) (= c1 (+ c 1)) (= x1 (+ x 1)) (= y1 (+ y 2))) (p c1 x1 y1))))
(assert (forall ((c Int) (x Int) (y Int)) (=> (and (p c x y) (>= c {n})) (q c x y))))
(assert (forall ((c Int) (x Int) (y Int) (c1 Int) (x1 Int) (y1 Int))
  (=> (and (q c x y) (< c {m}) (= c1 (+ c 1)) (= x1 (+ x 1)) (= y1 (+ y 2))) (q c1 x1 y1))))
(assert (forall ((c Int) (x Int) (y Int)) (=> (and (q c x y) (>= c {m}) {bad}) false)))
(check-sat)
"""
SAFE = TWO_LOOPS.format(n=50, m=100, bad="(not (= y (* 2 x)))")
UNSAFE = TWO_LOOPS.format(n=3, m=5, bad="(= y 10)")          # y = 10 after 5 iterations in all


def _load(tmp_path: Path, text: str, name: str):
    f = tmp_path / name
    f.write_text(text)
    return load_program(f)


def _reachable_in(ts, init, k: int) -> bool:
    """Bad reachable from `init` in exactly k steps of ts."""
    s = z3.Solver()
    s.add(ts.at(init, 0), *[ts.trans_at(j) for j in range(k)], ts.at(ts.bad, k))
    return s.check() == z3.sat


@pytest.mark.parametrize("text, unsafe", [(SAFE, False), (UNSAFE, True)], ids=["safe", "unsafe"])
def test_the_entry_system_is_the_plain_system_one_step_later(tmp_path, text, unsafe):
    sys = CPGSystem(build_cpg(_load(tmp_path, text, "p.smt2")))
    assert single_loop_system(sys, Deadline.after(10)) is None
    start = entry_system(sys, Deadline.after(10))
    assert start is not None and start.program_depth(3) == 4
    reached = []
    for k in range(1, 14):
        plain = _reachable_in(sys.ts, sys.ts.init, k)
        assert plain == _reachable_in(start.ts, start.ts.init, k - 1), k
        reached.append(plain)
    assert any(reached) == unsafe


# two loops in sequence: by default the tpa engine solves them by the network of per-loop TPAs, as Golem does
SINGLE = TPAOptions(loops="single")


@pytest.fixture(scope="module")
def proved(tmp_path_factory):
    prog = _load(tmp_path_factory.mktemp("e"), SAFE, "safe.smt2")
    v = verify("tpa", prog, timeout=30, settings=SINGLE)
    assert v.status == Status.TRUE, v.reason
    assert isinstance(v.evidence, TransitionInvariantProof) and v.evidence.init is not None
    return prog, v.evidence


def test_tpa_proves_two_loops_from_the_entry_system_and_the_proof_passes(proved):
    prog, proof = proved
    assert proof.to_json()["system"] == "pc-encoded cutpoint graph after the entry step"
    assert recheck_proof(prog, proof, False, Deadline.after(30)) is None


def test_an_entry_set_that_misses_a_state_after_the_entry_fails(proved):
    prog, proof = proved
    x = z3.Int("i1")            # the CHC front-end's slot for the second Int argument
    why = recheck_proof(prog, replace(proof, init=to_text(x == 1)), False, Deadline.after(30))
    assert why is not None and "Init' misses" in why


def test_tpa_refutes_the_unsafe_twin_with_a_replayed_counterexample(tmp_path):
    v = verify("tpa", _load(tmp_path, UNSAFE, "unsafe.smt2"), timeout=30, settings=SINGLE)
    assert v.status == Status.FALSE, v.reason
    assert v.stats["system"] == "pc-encoded cutpoint graph after the entry step"
