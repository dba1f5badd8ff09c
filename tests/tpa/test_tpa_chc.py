"""TPA core on single-predicate CHC-COMP files (translated directly to a transition system by `tpa_chc`).

sat = safe, unsat = unsafe (expected.csv). Answers must agree with the expected status; UNKNOWN is allowed
only where marked.
"""
from __future__ import annotations

import csv

import pytest

from looprover.tpa import TPAStatus, check_safe_certificate, solve_tpa
from looprover.deadline import Deadline
from helpers.tpa_chc import chc_to_ts

BASE = "benchmarks/chc/chc-comp25-LIA-Lin/"
SOLVED = [
    "extra-small-lia/const_mod_1_000.smt2",
    "hopv/lia/fpice/inductive3_000.smt2",
    "llreve-bench/smt2/loop__simple-loop_000.smt2",
    "vmt-chc-benchmarks/lustre/SYNAPSE_all_e8_251_e3_1472_000.smt2",
]
HARD = [                                  # beyond plain TPA's interpolants: only "not wrong" is required
    "vmt-chc-benchmarks/ctigar/down.c_000.smt2",
    "llreve-bench/smt2/loop__barthe2_000.smt2",
]


def _expected(shared_dir) -> dict[str, str]:
    with open(shared_dir / "benchmarks/chc/expected.csv") as fh:
        return {r["file"]: r["expected"] for r in csv.DictReader(fh)}


def _run(shared_dir, rel: str, timeout: float):
    path = shared_dir / BASE / rel
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    ts = chc_to_ts(path)
    assert ts is not None
    return ts, solve_tpa(ts, timeout=timeout), _expected(shared_dir)["chc-comp25-LIA-Lin/" + rel]


@pytest.mark.slow
@pytest.mark.parametrize("rel", SOLVED)
def test_chc_solved(shared_dir, rel):
    ts, r, exp = _run(shared_dir, rel, 30.0)
    want = TPAStatus.SAFE if exp == "sat" else TPAStatus.UNSAFE
    assert r.status == want, r.reason
    if r.status == TPAStatus.SAFE:
        assert check_safe_certificate(ts, r.certificate, Deadline.after(30)) is None
    else:
        assert r.witness.path is not None and len(r.witness.path) == r.witness.depth + 1


@pytest.mark.parametrize("rel", HARD)
def test_chc_hard_never_wrong(shared_dir, rel):
    _, r, exp = _run(shared_dir, rel, 2.0)
    wrong = TPAStatus.UNSAFE if exp == "sat" else TPAStatus.SAFE
    assert r.status != wrong
