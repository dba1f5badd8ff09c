"""The `labmc` engine: the LABMC abstraction (`transforms/labmc.py`), then BMC of the bounded abstract program.

An instance of "transform, then engine" (`engines/transformed.py`): the abstraction over-approximates, so BMC's
TRUE on it is a TRUE; a counterexample of the abstraction is first tried as a test of the original program on
the same inputs, then confirmed (or refuted) by BMC of the original with the time left. BMC of the abstraction
gets the largest abstract-loop bound M as its bound: every abstract loop is exhausted there, so BMC decides or
reports why it could not.

A TRUE is answered with a certificate only (`evidence/certify.py`): invariants of the program itself, from the
abstract domains' candidates, that exclude every violation 1-inductively. The abstraction's own argument (havocked
outputs, closed forms relative to a loop's entry, the induction copies) states no invariant of the program, so a
TRUE the candidates do not certify is UNKNOWN with the reason.
"""
from __future__ import annotations

import dataclasses

from looprover.engines.base import Run, Task
from looprover.engines.bmc import BMC
from looprover.engines.transformed import TransformThenEngine
from looprover.program.cfa import Program
from looprover.transforms.labmc import LabmcOptions, LABMCTransform
from looprover.verdict import Status, Verdict
from looprover.evidence.certify import certify_with_domains
from looprover.evidence.proofs import Proof


class LABMC(TransformThenEngine):
    name = "labmc"
    summary = "loop abstraction (output abstraction, abstract acceleration, induction), then BMC"
    Settings = LabmcOptions
    transform = LABMCTransform()
    inner = BMC()
    confirm = BMC()

    def solve(self, program: Program, task: Task, run: Run) -> Verdict:
        v = super().solve(program, task, run)
        if v.status != Status.TRUE or isinstance(v.evidence, Proof):
            return v          # a FALSE, or the confirming BMC's TRUE on the program, with its own certificate
        proof, why = certify_with_domains(program, [], run.bitvector, run.deadline)
        if proof is None:
            return self.unknown(f"{v.reason}, but no certificate from the domains' invariants: {why}")
        run.stats["certificate"] = f"{len(proof.invariants)} of the domains' candidate invariants, " \
                                   f"{proof.k}-inductive"
        return dataclasses.replace(v, evidence=proof)


PROVED = LABMC().proved
