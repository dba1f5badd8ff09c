"""The `summarize` engine: loop summaries (`transforms/summarize.py`), then BMC of the loop-free result.

An instance of "transform, then engine" (`engines/transformed.py`). The summaries over-approximate, so BMC's
TRUE on the summarized program is a TRUE; it is answered with a certificate only (`certify`): the summaries'
conjuncts at the loop heads, kept where jointly inductive on the program itself, must exclude every violation
1-inductively. A TRUE that needs more (relations to a loop's entry values, what BMC saw across loops) is UNKNOWN.
A counterexample of the summarized program is *leaping*: it may jump over iterations through a summary. It is run
on the original program on its inputs (`RunOnInputs`) and replayed; if that does not reach the violation, the
answer is UNKNOWN with the trace attached as a `LeapingCounterexample` (`--json`: `leaping_counterexample`), never
FALSE. There is no confirming engine: BMC of the original is an engine of its own in the portfolio.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from looprover.deadline import Deadline, OutOfTime
from looprover.engines.base import Run, Task
from looprover.engines.bmc import BMC
from looprover.engines.kinduction import houdini
from looprover.engines.transformed import TransformThenEngine
from looprover.errors import GiveUp
from looprover.program.cfa import Program
from looprover.program.cpg import build_cpg
from looprover.program.expr import BINDERS, walk
from looprover.smt.cpg_system import CPGSystem
from looprover.transforms.base import Transformed
from looprover.transforms.summarize import SummarizeOptions, SummarizeTransform
from looprover.verdict import Counterexample, LeapingCounterexample, Status, Verdict
from looprover.witness.hints import LoopInvariantHints
from looprover.witness.proofs import KInductiveProof, invariants_failure

TRANSFORM_SHARE = 0.5     # of the run's time, at most, for sampling and the inductiveness checks


class Summarize(TransformThenEngine):
    name = "summarize"
    summary = "loop summaries from domain candidates checked against one iteration, then BMC; leaping " \
              "counterexamples are UNKNOWN"
    Settings = SummarizeOptions
    languages = frozenset({"c"})
    cost = 1
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
        proof, why = certify(program, v.evidence, run.bitvector, run.deadline)
        if proof is None:
            return self.unknown(f"{v.reason}, but the summaries' invariants do not certify it: {why}")
        run.stats["certificate"] = f"{len(proof.invariants)} of the summaries' invariants, {proof.k}-inductive"
        return dataclasses.replace(v, evidence=proof)

    def unconfirmed(self, verdict: Verdict, candidate: Counterexample, t: Transformed) -> Verdict:
        leap = LeapingCounterexample(candidate.steps, candidate.inputs, candidate.initial, False,
                                     candidate.violated_at, program=t.program)
        return dataclasses.replace(verdict, reason=f"leaping counterexample: {verdict.reason}", evidence=leap)


def certify(program: Program, hints: Any, bitvector: bool, deadline: Deadline
            ) -> tuple[KInductiveProof | None, str]:
    """A checked proof from the summaries' conjuncts at the loop heads (`LoopInvariantHints`): their largest
    inductive subset (Houdini on the program's cutpoint graph; quantified ones checked apart), which must exclude
    every violation 1-inductively, as the checks of the portfolio decide again. (None, why) when they do not."""
    atoms = list(hints.atoms) if isinstance(hints, LoopInvariantHints) else []
    try:
        sys = CPGSystem(build_cpg(program), bitvector, deadline)
        quantified = [c for c in atoms if any(isinstance(n, BINDERS) for n in walk(c.atom))]
        kept = houdini(sys, [c for c in atoms if c not in quantified], deadline)
        if kept is None:
            return None, "Houdini did not finish in time"
        kept += _inductive_with(sys, kept, quantified, deadline)
        proof = KInductiveProof(1, tuple(kept))
        why = proof.check(program, bitvector, deadline)
    except (OutOfTime, GiveUp) as exc:
        return None, f"the check did not finish ({exc or 'deadline'})"
    return (proof, "") if why is None else (None, why)


def _inductive_with(sys: CPGSystem, kept: list, quantified: list, deadline: Deadline) -> list:
    """The quantified atoms (array contents over a range) that are inductive together with `kept`: all of them
    if they are jointly, else each one that is. They are kept out of Houdini, whose rounds read z3's models: a
    model may not decide a quantifier, and Houdini would drop one that holds or give up."""
    if not quantified or invariants_failure(sys, kept + quantified, deadline) is None:
        return quantified
    return [c for c in quantified if invariants_failure(sys, kept + [c], deadline) is None]
