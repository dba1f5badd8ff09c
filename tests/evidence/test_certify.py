"""Certificates for TRUEs without invariants of their own (`evidence/certify.py`): the quantifier-free candidates
are tried alone first, the quantified array facts only when those do not certify, and either way the proof is
checked on the program."""
import pytest

import looprover.evidence.certify as certify_mod
from looprover.deadline import Deadline
from looprover.evidence.certify import certify, certify_with_domains, domain_candidates, quantified
from looprover.program.expr import free_vars

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


def test_runs_from_houdini_s_models_drop_no_invariant(monkeypatch):
    """`RunRefuter` drops candidates false in states reachable from a round's model state; on random programs
    Houdini keeps the same invariants with and without it (every drop was right), and it does drop some."""
    from helpers.randprog import random_program
    from looprover.program.cpg import build_cpg
    from looprover.smt.cpg_system import CPGSystem
    dropped: list[int] = []
    real = certify_mod.RunRefuter._refuted

    def counted(self, node, state, alive):
        gone = real(self, node, state, alive)
        dropped.append(len(gone))
        return gone
    monkeypatch.setattr(certify_mod.RunRefuter, "_refuted", counted)
    for seed in range(10):
        p = random_program(seed)
        cands = domain_candidates(p, False, Deadline.after(30))
        with_runs = certify_mod.houdini(CPGSystem(build_cpg(p), False, None), cands, Deadline.after(60))
        with monkeypatch.context() as m:
            m.setattr(certify_mod.RunRefuter, "after_step", lambda self, model, alive: set())
            m.setattr(certify_mod.RunRefuter, "at_init", lambda self, model, alive: set())
            without = certify_mod.houdini(CPGSystem(build_cpg(p), False, None), cands, Deadline.after(60))
        assert with_runs is not None and with_runs == without, seed
    assert sum(dropped) > 0


def test_no_runs_from_models_that_assume_quantified_candidates_at_instances_only(load, monkeypatch):
    """Houdini's queries assume a quantified candidate at a few instances, so a model's array may break it
    elsewhere: a run from such a state dropped true invariants (SV-COMP's array-cav19 tasks). With quantified
    candidates alive the refuter does nothing, and Houdini keeps the same as without it."""
    p = load("array", ARRAY)
    cands = domain_candidates(p, False, Deadline.after(30))
    assert any(quantified(c) for c in cands)
    from looprover.program.cpg import build_cpg
    from looprover.smt.cpg_system import CPGSystem
    with_runs = certify_mod.houdini(CPGSystem(build_cpg(p), False, None), cands, Deadline.after(60))
    monkeypatch.setattr(certify_mod.RunRefuter, "after_step", lambda self, model, alive: set())
    monkeypatch.setattr(certify_mod.RunRefuter, "at_init", lambda self, model, alive: set())
    without = certify_mod.houdini(CPGSystem(build_cpg(p), False, None), cands, Deadline.after(60))
    assert with_runs is not None and with_runs == without


def test_a_fact_from_before_a_loop_is_carried_through_it_among_many_variables(load):
    """With many variables, relations need a variable the loop changes; `q - p == 2` holds before the loop,
    which changes neither, and is read after it: as both are live at the head, the relation is a candidate there
    and certifies the assertion (Verisec's bind rrextract carries `cp.off - n == 2` through a `strlen`)."""
    unused = " ".join(f"int u{k} = __VERIFIER_nondet_int();" for k in range(24))
    body = (unused + " int p = __VERIFIER_nondet_int(); int q = p + 2; int i = 0;"
            " while (i < 100 && __VERIFIER_nondet_int()) i++; __VERIFIER_assert(q - p == 2);")
    p = load("carried", body)
    cands = domain_candidates(p, False, Deadline.after(30))
    assert any({"p", "q"} <= {v.name.split("::")[-1] for v in free_vars(c.atom)} for c in cands if c.node is not None)
    proof, why = certify(p, cands, False, Deadline.after(60))
    assert proof is not None, why
