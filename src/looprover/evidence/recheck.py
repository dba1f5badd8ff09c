"""The portfolio's own checks of evidence: a FALSE's counterexample is executed again on the original program, a
TRUE's proof (`evidence/proofs.py`) is decided again with fresh solvers.

Why: an engine's `validated` flag is the engine's word. The portfolio runs engines as separate processes and
answers for all of them, so it checks what it is given instead of a flag: a trace is replayed edge by edge on the
program's own edges (`replay.replay`); a deep run, kept abbreviated (`deep.RunCounterexample`), is run again from
its initial values on its recorded inputs (on every recorded havoc value, when it has its havoc plan), and a
run too long for the interpreter, which was confirmed compiled, is compiled and run again (`evidence.native`).
Each must end in a violated assertion without undefined behaviour on the way (signed overflow in either
encoding), within the caller's deadline. A non-termination witness (termination FALSE) goes through its own
independent check again (`nontermination.check_nontermination`: stem replayed, recurrent set decided by a fresh
solver).
"""
from __future__ import annotations

import dataclasses

import z3

from looprover.deadline import Deadline, OutOfTime
from looprover.errors import GiveUp
from looprover.program.cfa import Program
from looprover.program.interp import InputOracle, run
from looprover.verdict import Counterexample, NonTermination, Status, Verdict
from looprover.evidence.deep import PlanSeq, RunCounterexample
from looprover.evidence.proofs import Proof
from looprover.evidence.nontermination import check_nontermination
from looprover.evidence.replay import replay


def recheck_counterexample(program: Program, cex: object, bitvector: bool, deadline: Deadline) -> str | None:
    """Why `cex` is not a violation of `program` (None when it is one)."""
    if isinstance(cex, NonTermination):
        return check_nontermination(program, cex, bitvector, deadline)
    if not isinstance(cex, Counterexample):
        return "no counterexample"
    if isinstance(cex, RunCounterexample) and cex.native:
        from looprover.evidence import native
        return native.run(program, dict(cex.initial), cex.plan or [], deadline.left())
    if isinstance(cex, RunCounterexample) and cex.omitted:
        oracle = InputOracle(program, cex.inputs, PlanSeq(cex.plan) if cex.plan is not None else ())
        res = run(program, oracle, dict(cex.initial), max_steps=cex.length + 1,
                  signed_overflow="wrap" if bitvector else "math", stop=deadline.expired)
        if res.outcome == "stopped":
            return "the deadline passed while running the program on the counterexample's inputs"
        if res.outcome != "violation":
            return f"running the program on the counterexample's inputs ended with '{res.outcome}' after " \
                   f"{res.steps} edges"
        if res.overflowed:
            return "the violation depends on signed overflow (undefined behaviour)"
        return None
    res = replay(program, cex, bitvector)
    return None if res.ok else res.reason


def recheck_proof(program: Program, proof: Proof, bitvector: bool, deadline: Deadline) -> str | None:
    """Why `proof` does not prove `program` safe (None when it does); a check that cannot be decided in time or
    fails inside the solver counts as failed."""
    try:
        return proof.check(program, bitvector, deadline)
    except OutOfTime:
        return "the deadline passed while checking the proof"
    except (GiveUp, z3.Z3Exception) as exc:
        return f"the proof could not be checked: {exc}"


def evidence_failure(program: Program, v: Verdict, bitvector: bool, deadline: Deadline, termination: bool = False
                     ) -> str | None:
    """Why a verdict's evidence does not hold, or None when it passed or there is nothing to check (UNKNOWN):
    a FALSE's counterexample is executed again on the program, a TRUE's proof decided again with fresh solvers,
    and a TRUE without a proof has no certificate, so it does not count; nor does a proof of the other kind
    of property (`termination`: the task asks that every run ends, else that no assertion fails)."""
    if v.status == Status.FALSE:
        return recheck_counterexample(program, v.evidence, bitvector, deadline)
    if v.status == Status.TRUE:
        if not isinstance(v.evidence, Proof):
            return "the TRUE comes without a certificate (no proof object that a check could decide)"
        wanted = "termination" if termination else "safety"
        if v.evidence.proves != wanted:
            return f"the proof is one of {v.evidence.proves}, the task asks for {wanted}"
        return recheck_proof(program, v.evidence, bitvector, deadline)
    return None


def rejected(v: Verdict, why: str, by: str) -> Verdict:
    """`v` as UNKNOWN because its evidence failed the check `by` made."""
    what = "its counterexample did not replay" if v.status == Status.FALSE else "its proof failed the check"
    return dataclasses.replace(v, status=Status.UNKNOWN, evidence=None, reason=f"{what} in {by}: {why} ({v.reason})")
