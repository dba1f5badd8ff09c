"""TPA's TRUE as a proof checked in another process (`tpa/proof.py`): the engine's proof passes the check against
the program; every piece of it that a lying or buggy engine could get wrong is caught when tampered with."""
from __future__ import annotations

from dataclasses import replace

import pytest
import z3

from looprover.deadline import Deadline
from looprover.engines import verify
from looprover.smt.text import to_text
from looprover.tpa.proof import TransitionInvariantProof
from looprover.verdict import Status
from looprover.evidence.recheck import recheck_proof

from helpers.deep_counter import DEEP, load


@pytest.fixture(scope="module")
def safe(tmp_path_factory):
    prog = load(tmp_path_factory.mktemp("p"), DEEP.replace("@N@", "1000").replace("@OP@", "=="))
    v = verify("tpa", prog, timeout=30)
    assert v.status == Status.TRUE, v.reason
    assert isinstance(v.evidence, TransitionInvariantProof) and v.evidence.certificate.free_trans is not None
    return prog, v.evidence


def _check(prog, proof):
    return recheck_proof(prog, proof, False, Deadline.after(30))


def test_the_engines_proof_passes(safe):
    prog, proof = safe
    assert _check(prog, proof) is None


def test_a_transition_invariant_that_proves_nothing_fails(safe):
    prog, proof = safe
    why = _check(prog, replace(proof, certificate=replace(proof.certificate, ti=to_text(z3.BoolVal(True)))))
    assert why is not None and "certificate condition fails" in why


def test_an_initial_set_that_misses_entry_states_fails(safe):
    """Init_L = {x = 1, y = 2} skips the real entry state (0, 0): the certificate might hold for it, the proof
    must not."""
    prog, proof = safe
    x, y = z3.Int("x"), z3.Int("y")          # the loop system names its state after the C variables
    why = _check(prog, replace(proof, init=to_text(z3.And(x == 1, y == 2))))
    assert why is not None and "Init_L misses" in why


def test_wrap_states_that_are_too_few_fail(safe):
    """Claiming no state wraps (Wrap = false) while x++ wraps at 2^32 - 1 (unreachable, but a step from there
    exists) makes the wrap-free relation miss an exact step."""
    prog, proof = safe
    why = _check(prog, replace(proof, certificate=replace(proof.certificate, wrap=to_text(z3.BoolVal(False)))))
    assert why is not None and "wrap-free relation misses" in why


def test_the_proof_of_the_safe_program_does_not_prove_the_unsafe_one(safe, tmp_path):
    prog, proof = safe
    unsafe = load(tmp_path, DEEP.replace("@N@", "1000").replace("@OP@", "!="))
    assert _check(unsafe, proof) is not None


@pytest.mark.slow
def test_a_split_certificate_travels_and_is_checked_not_trusted(tmp_path):
    """Split TPA's exact fixed point (`tpa.variant=split`, no seeds, so E/L levels are what closes it): the
    chain of levels goes into the proof and the portfolio's check decides it; a chain with a level dropped,
    a top level replaced, or the restriction it needs left out is rejected."""
    from looprover.tpa import TPAOptions
    prog = load(tmp_path, DEEP.replace("@N@", "10").replace("@OP@", "=="))
    v = verify("tpa", prog, timeout=60, settings=TPAOptions(variant="split", seeds=False))
    assert v.status == Status.TRUE, v.reason
    cert = v.evidence.certificate
    assert cert.side.startswith("split-") and len(cert.chain) == cert.level and cert.restricted
    assert _check(prog, v.evidence) is None
    assert v.evidence.to_json()["transition_invariant"] in ("L ∨ L∘E", "L ∨ E∘L")
    x, x1 = z3.Int("x"), z3.Int("x'")
    e_top, l_top = cert.chain[-1]
    for bad in (replace(cert, chain=cert.chain[1:]),
                replace(cert, chain=cert.chain[:-1] + ((to_text(x1 == x + 1), l_top),)),
                replace(cert, restricted=False)):
        why = _check(prog, replace(v.evidence, certificate=bad))
        assert why is not None and "certificate" in why
    unsafe = load(tmp_path, DEEP.replace("@N@", "10").replace("@OP@", "!="), "u.c")
    assert _check(unsafe, v.evidence) is not None
