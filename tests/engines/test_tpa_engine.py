"""The `engines/tpa.py` glue: Program -> cutpoint-graph transition system -> TPA -> Verdict.

FALSE only with a counterexample that replayed on the program; TRUE only with a checked certificate; the
rest UNKNOWN. Cases are the shared engine cases and CHC files through the CHC front-end.
"""
from __future__ import annotations

import time

import pytest

from helpers import enginecases as ec
from looprover.deadline import Deadline
from looprover.engines import verify
from looprover.evidence.recheck import recheck_proof
from looprover.verdict import Status

CASES = [
    ("loopfree-safe", lambda: ec.loopfree(True), Status.TRUE),
    ("loopfree-unsafe", lambda: ec.loopfree(False), Status.FALSE),
    ("bounded-unsafe", lambda: ec.bounded_loop(False), Status.FALSE),
    ("even-unsafe", lambda: ec.even_counter(8), Status.FALSE),
    ("udec-safe", ec.unsigned_decrement, Status.TRUE),
    ("uwrap-unsafe", ec.unsigned_wrap_bug, Status.FALSE),
    ("negdiv-safe", lambda: ec.negative_division(True), Status.TRUE),
    ("irreducible-unsafe", lambda: ec.irreducible(False), Status.FALSE),
]


@pytest.mark.parametrize("bitvector", [False, True], ids=["int", "bv"])
@pytest.mark.parametrize("name,make,want", CASES, ids=[c[0] for c in CASES])
def test_engine_cases(name, make, want, bitvector):
    prog = make()
    v = verify("tpa", prog, timeout=30, bitvector=bitvector)
    assert v.status == want, v.reason
    if want == Status.FALSE:
        assert v.evidence.validated
    else:       # the proof passes the portfolio's independent check
        assert recheck_proof(prog, v.evidence, bitvector, Deadline.after(30)) is None


def test_arrays_are_verified_on_the_cell_abstraction():
    prog = ec.array_init(True)
    v = verify("tpa", prog, timeout=20)
    assert v.status == Status.TRUE and "cell abstraction" in v.reason, v.reason
    assert recheck_proof(prog, v.evidence, False, Deadline.after(30)) is None
    assert verify("tpa", ec.array_init(False), timeout=10).status != Status.TRUE


def test_out_of_memory_is_unknown_with_that_reason(monkeypatch):
    from looprover.tpa.core import TPA
    from looprover.tpa.split import SplitTPA

    def boom(self):
        raise MemoryError()
    for cls in (TPA, SplitTPA):
        monkeypatch.setattr(cls, "_solve", boom)
    v = verify("tpa", ec.loopfree(False), timeout=10)
    assert v.status == Status.UNKNOWN and v.reason == "out of memory"


def test_unsolved_case_is_not_wrong():
    """A nested loop TPA's interpolants do not close in time: UNKNOWN by the deadline, never a verdict."""
    t0 = time.monotonic()
    v = verify("tpa", ec.nested_unbounded(7), timeout=3)
    assert v.status in (Status.TRUE, Status.UNKNOWN)
    assert time.monotonic() - t0 < 3 + 3


CHC = [
    ("chc-comp25-LIA-Lin/hcai-bench/svcomp/O3/O3_terminator_03_true-unreach-call_true-termination_000.smt2",
     Status.TRUE),
    ("chc-comp25-LIA-Lin/hcai-bench/svcomp/O0/O0_nec11_false-unreach-call_false-termination_000.smt2",
     Status.FALSE),
    # regression: seed-candidate collection walked shared If-terms per atom and ignored the deadline
    ("chc-comp25-LIA-Lin/rust-horn/bmc-1-test-bmc-1-unsafe_000.smt2", Status.FALSE),
]


@pytest.mark.parametrize("rel,want", CHC, ids=[c[0].rsplit("/", 1)[1] for c in CHC])
def test_chc_through_frontend(shared_dir, rel, want):
    from looprover.frontend.chc import load_chc_program
    path = shared_dir / "benchmarks/chc" / rel
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    t0 = time.monotonic()
    v = verify("tpa", load_chc_program(path), timeout=20)
    assert v.status == want, v.reason
    assert time.monotonic() - t0 < 20 + 3
