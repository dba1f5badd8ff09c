"""Certificates for TRUEs without invariants of their own (`evidence/certify.py`): the quantifier-free candidates
are tried alone first, the quantified array facts only when those do not certify, and either way the proof is
checked on the program."""
import pytest

import looprover.evidence.certify as certify_mod
from looprover.deadline import Deadline
from looprover.evidence.certify import certify, certify_with_domains, domain_candidates, quantified

from helpers.svcomp_c import load_main

# safe with a scalar invariant (x + y == 10), and with a quantified one (every cell written is 0)
SCALAR = "int x = 0, y = 10; while (__VERIFIER_nondet_int() && y > 0) { x++; y--; } __VERIFIER_assert(x + y == 10);"
ARRAY = ("int N = __VERIFIER_nondet_int(); __VERIFIER_assume(N > 0 && N < 100000); int a[N];"
         " for (int i = 0; i < N; i++) a[i] = 0; for (int j = 0; j < N; j++) __VERIFIER_assert(a[j] == 0);")


@pytest.fixture
def load(tmp_path):
    pytest.importorskip("looprover.frontend.c")
    return lambda name, body: load_main(tmp_path, name, body)


def _rounds(monkeypatch) -> list[int]:
    """The candidate counts of certify's Houdini rounds, recorded as they run."""
    sizes: list[int] = []
    real = certify_mod._houdini

    def spy(sys, cands, deadline):
        sizes.append(len(cands))
        return real(sys, cands, deadline)
    monkeypatch.setattr(certify_mod, "_houdini", spy)
    return sizes


def test_quantifier_free_candidates_certify_alone(load, monkeypatch):
    p = load("scalar", SCALAR)
    cands = domain_candidates(p, False, Deadline.after(30))
    # a quantified candidate among them, so that the staging is what is tested
    arr = domain_candidates(load("array", ARRAY), False, Deadline.after(30))
    extra = [c for c in arr if quantified(c)][:1]
    sizes = _rounds(monkeypatch)
    proof, why = certify(p, cands + extra, False, Deadline.after(60))
    assert proof is not None, why
    assert sizes == [len([c for c in cands if not quantified(c)])]     # one round, without the quantified ones
    assert proof.check(p, False, Deadline.never()) is None


def test_quantified_candidates_when_the_others_do_not_certify(load, monkeypatch):
    p = load("array", ARRAY)
    sizes = _rounds(monkeypatch)
    proof, why = certify_with_domains(p, [], False, Deadline.after(120))
    assert proof is not None, why
    assert len(sizes) == 2 and sizes[0] < sizes[1]
    assert any(quantified(c) for c in proof.invariants)
    assert proof.check(p, False, Deadline.never()) is None


def test_an_unsafe_twin_is_never_certified(load):
    p = load("array_bad", ARRAY.replace("a[i] = 0", "a[i] = i"))
    proof, why = certify_with_domains(p, [], False, Deadline.after(60))
    assert proof is None and why
