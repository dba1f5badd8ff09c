"""TRUE evidence the portfolio checks again: k-induction proofs hold for the programs they were found for, and
tampered ones (an invariant that is not inductive, a bound too small, a proof for an unsafe program) fail."""
from dataclasses import replace

import pytest

from helpers import enginecases as ec
from looprover.deadline import Deadline
from looprover.domains import Candidate
from looprover.engines import verify
from looprover.program.cpg import build_cpg
from helpers.progdsl import c, eq
from looprover.verdict import Status
from looprover.evidence.proofs import KInductiveProof


def _proof(prog):
    v = verify("kinduction", prog, timeout=20)
    assert v.status == Status.TRUE, v.reason
    assert isinstance(v.evidence, KInductiveProof)
    return v.evidence


def _check(proof, prog, bitvector=False):
    return proof.check(prog, bitvector, Deadline.after(20))


def test_the_engines_proof_passes_the_check():
    for make in (lambda: ec.even_counter(7), ec.nonneg_counter, lambda: ec.nested_unbounded(7)):
        prog = make()
        assert _check(_proof(prog), prog) is None


def test_a_proof_without_the_invariants_it_needs_fails():
    prog = ec.even_counter(7)
    proof = _proof(prog)
    assert proof.invariants                       # x even is needed: plain k-induction never closes
    assert "step" in _check(replace(proof, invariants=()), prog)


def test_an_invariant_that_does_not_hold_fails():
    """`x == 0` at the loop head: true on entry, not preserved by `x += 2`. It would make the step case trivial,
    so accepting it would be a wrong TRUE for this unsafe program."""
    prog = ec.even_counter(8)                    # unsafe: x reaches 8
    (head,) = build_cpg(prog).cutpoints
    x_is_zero = Candidate(head, eq(prog.var("x"), c(0)))
    why = _check(KInductiveProof(1, (x_is_zero,)), prog)
    assert why is not None and "consecution" in why


def test_a_proof_for_an_unsafe_program_fails_in_the_base_case():
    prog = ec.bounded_loop(False)
    why = _check(KInductiveProof(50, ()), prog)
    assert why is not None and "base case" in why


def test_a_proof_of_the_other_kind_of_property_is_no_evidence():
    """A termination proof says every run ends, not that no assertion fails (a loop-free program that fails
    its assertion has one), and an invariant proof says nothing of termination: each is rejected for the other
    kind of task, whatever its own check says."""
    from looprover.evidence.recheck import evidence_failure
    from looprover.program.expr import I32
    from looprover.termination.proof import TerminationProof
    from looprover.verdict import Verdict
    from helpers.progdsl import Prog, ne
    p = Prog("fails")
    x = p.var("x", I32)
    p.assign(x, c(0))
    p.assert_(ne(x, c(0)))
    unsafe = p.build()
    ends = Verdict(Status.TRUE, "termination", "no loops", TerminationProof((), (), ()))
    assert ends.evidence.check(unsafe, False, Deadline.after(20)) is None
    assert "termination" in evidence_failure(unsafe, ends, False, Deadline.after(20))
    assert evidence_failure(unsafe, ends, False, Deadline.after(20), termination=True) is None
    prog = ec.nonneg_counter()
    safe = Verdict(Status.TRUE, "kinduction", "proved", _proof(prog))
    assert evidence_failure(prog, safe, False, Deadline.after(20)) is None
    assert "safety" in evidence_failure(prog, safe, False, Deadline.after(20), termination=True)


@pytest.mark.parametrize("seed", range(30))
def test_a_cutpoint_proof_is_accepted_per_fragment_exactly_where_every_horn_clause_holds(seed):
    """The per-fragment check of a cutpoint-invariant proof asks the obligations of `cpg_horn`'s clauses
    (one encoding per fragment instead of one per CPG edge): on random programs and interpretations over the
    live variables -- the interval analysis's states (the assertions it does not show assumed), some with a
    bound tightened at random so that they may fail initiation, consecution or safety -- it accepts exactly
    what the clause-by-clause check accepts."""
    import random

    import z3

    from helpers.randprog import random_program
    from looprover.absint.fixpoint import analyze
    from looprover.engines.intervals import proof_of
    from looprover.evidence.proofs import CutpointInvariantProof
    from looprover.program.liveness import liveness
    from looprover.smt.cpg_system import CPGSystem
    from looprover.smt.systems import cpg_horn
    from looprover.smt.text import from_text
    from looprover.runtime_checks import asserting
    program = random_program(seed)
    result = analyze(program, False)
    program = asserting(program, set(result.proved))        # the assertions it does not show assumed
    sys = CPGSystem(build_cpg(program))
    live = liveness(program)
    horn = cpg_horn(sys, live)
    base = {n: from_text(t) for n, t in proof_of(program, result, False).invariants}
    r = random.Random(seed)
    verdicts = set()
    for trial in range(4):
        interp = dict(base)
        if trial:
            n = r.choice(sorted(interp))
            ints = [v for v in live.get(n, ()) if hasattr(v.type, "bits")]
            if ints:
                v = r.choice(ints)
                interp[n] = z3.And(interp[n], sys.cur[v.name] <= r.randint(-3, 12))
        by_clause = horn.check_solution(interp, Deadline.after(30)) is None
        by_fragment = CutpointInvariantProof.of(interp, program).check(program, False, Deadline.after(30)) is None
        assert by_clause == by_fragment, (seed, trial)
        verdicts.add(by_fragment)
    assert True in verdicts                     # the analysis's own states pass
