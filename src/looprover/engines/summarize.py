"""The `summarize` engine: loop summaries (`transforms/summarize.py`), then BMC of the loop-free result.

An instance of "transform, then engine" (`engines/transformed.py`). The summaries over-approximate, so BMC's
TRUE on the summarized program is a TRUE; it is answered with a certificate only (`evidence/certify.py`): the
summaries' conjuncts at the loop heads (with the domains' candidates if they are not enough), kept where jointly
inductive on the program itself, must exclude every violation 1-inductively. A TRUE that needs more (relations to
a loop's entry values, what BMC saw across loops) is UNKNOWN.
A counterexample of the summarized program is *leaping*: it may jump over iterations through a summary. It is run
on the original program on its inputs (`RunOnInputs`) and replayed; if that does not reach the violation, the
answer is UNKNOWN with the trace attached as a `LeapingCounterexample` (`--json`: `leaping_counterexample`), never
FALSE. There is no confirming engine: BMC of the original is an engine of its own in the portfolio.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from looprover.engines.base import Run, Task
from looprover.engines.bmc import BMC
from looprover.engines.transformed import TransformThenEngine
from looprover.program.cfa import Program
from looprover.transforms.base import Transformed
from looprover.transforms.summarize import SummarizeOptions, SummarizeTransform
from looprover.verdict import Counterexample, LeapingCounterexample, Status, Verdict
from looprover.evidence.certify import certify_with_domains
from looprover.evidence.hints import LoopInvariantHints

TRANSFORM_SHARE = 0.5     # of the run's time, at most, for sampling and the inductiveness checks


class Summarize(TransformThenEngine):
    name = "summarize"
    summary = "loop summaries from domain candidates checked against one iteration, then BMC; leaping " \
              "counterexamples are UNKNOWN"
    Settings = SummarizeOptions
    transform = SummarizeTransform()
    inner = BMC()
    confirm = None
    result = "summarized program"

    def settings(self, run: Run) -> Any:
        own: SummarizeOptions = super().settings(run)
        return dataclasses.replace(own, bitvector=run.bitvector,
                                   deadline=run.deadline.cap(run.deadline.left() * TRANSFORM_SHARE))

    def solve(self, program: Program, task: Task, run: Run) -> Verdict:
        v = super().solve(program, task, run)
        if v.status != Status.TRUE:
            return v
        atoms = list(v.evidence.atoms) if isinstance(v.evidence, LoopInvariantHints) else []
        proof, why = certify_with_domains(program, atoms, run.bitvector, run.deadline)
        if proof is None:
            return self.unknown(f"{v.reason}, but the summaries' invariants do not certify it: {why}")
        run.stats["certificate"] = f"{len(proof.invariants)} of the summaries' invariants, {proof.k}-inductive"
        return dataclasses.replace(v, evidence=proof)

    def unconfirmed(self, verdict: Verdict, candidate: Counterexample, t: Transformed) -> Verdict:
        leap = LeapingCounterexample(candidate.steps, candidate.inputs, candidate.initial, False,
                                     candidate.violated_at, program=t.program)
        return dataclasses.replace(verdict, reason=f"leaping counterexample: {verdict.reason}", evidence=leap)
