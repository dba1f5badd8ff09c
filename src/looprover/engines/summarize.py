"""The `summarize` engine: loop summaries (`transforms/summarize.py`), then BMC of the loop-free result.

An instance of "transform, then engine" (`engines/transformed.py`). The summaries over-approximate, so BMC's
TRUE on the summarized program is a TRUE. A counterexample of the summarized program is *leaping*: it may
jump over iterations through a summary. It is run on the original program on its inputs (`RunOnInputs`) and
replayed; if that does not reach the violation, the answer is UNKNOWN with the trace attached as a
`LeapingCounterexample` (`--json`: `leaping_counterexample`), never FALSE. There is no confirming engine: BMC
of the original is an engine of its own in the portfolio.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from looprover.engines.base import Run
from looprover.engines.bmc import BMC
from looprover.engines.transformed import TransformThenEngine
from looprover.transforms.base import Transformed
from looprover.transforms.summarize import SummarizeOptions, SummarizeTransform
from looprover.verdict import Counterexample, LeapingCounterexample, Verdict

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

    def unconfirmed(self, verdict: Verdict, candidate: Counterexample, t: Transformed) -> Verdict:
        leap = LeapingCounterexample(candidate.steps, candidate.inputs, candidate.initial, False,
                                     candidate.violated_at, program=t.program)
        return dataclasses.replace(verdict, reason=f"leaping counterexample: {verdict.reason}", evidence=leap)
