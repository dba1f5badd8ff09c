"""The transform interface: a program-to-program rewrite that states its guarantee and maps evidence back.

Why: LABMC, loop summarization and under-approximating acceleration all rewrite a program's loops and hand the
result to an engine. What differs between them is only the rewrite and the direction of its guarantee; what
follows from the engine's answer is always the same:

  * over-approximation (the result has every behaviour of the original, maybe more): a TRUE carries over; a
    counterexample of the result is only a candidate until a trace of the *original* replays;
  * under-approximation (every behaviour of the result is one of the original's): a counterexample carries over
    once mapped back and replayed; a TRUE proves nothing;
  * exact: both.

A `Transformed` carries the new program, the guarantee, and a `BackTranslation` that maps a counterexample of the
result to a trace of the original (or says it cannot) and an invariant of the result to one of the original.
`engines/transformed.py` composes any transform with any engine on these rules alone.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar

from looprover.deadline import Deadline
from looprover.program.cfa import Program, VarInfo
from looprover.program.expr import Type, Var
from looprover.program.interp import InputOracle, run
from looprover.verdict import Counterexample, TraceStep


class Guarantee(str, Enum):
    OVER = "over-approximation"
    UNDER = "under-approximation"
    EXACT = "exact"

    @property
    def keeps_true(self) -> bool:
        return self in (Guarantee.OVER, Guarantee.EXACT)


class BackTranslation:
    """Maps evidence about the transformed program to the original. The default maps nothing."""

    def trace(self, cex: Counterexample, original: Program, budget: float) -> Counterexample | None:
        """A trace of `original` for the counterexample `cex` of the result, not yet validated (the caller
        replays it), or None. `budget` is the seconds it may take."""
        return None

    def invariant(self, evidence: Any) -> Any | None:
        """The result's safety evidence restated for the original, or None if it does not carry over."""
        return None


@dataclass
class Transformed:
    program: Program
    guarantee: Guarantee
    back: BackTranslation = field(default_factory=BackTranslation)
    unwind_bound: int | None = None     # BMC exhausts every loop of `program` at this bound (None: not known)
    notes: list[str] = field(default_factory=list)     # what was done, one line per loop (progress, stats)


def declare_temp(variables: dict[str, VarInfo], base: str, t: Type) -> Var:
    """A new variable of kind `temp` named `base` (`base#1`, ... when taken), declared in `variables`: what a
    transform adds (ghosts, cells, havocked reads) is never an input of the program."""
    name, i = base, 0
    while name in variables:
        i += 1
        name = f"{base}#{i}"
    v = Var(name, t)
    variables[name] = VarInfo(v, "temp", name)
    return v


class Transform:
    """A named program transformation; subclasses set the class attributes and implement `apply`."""

    name: ClassVar[str]
    summary: ClassVar[str] = ""
    guarantee: ClassVar[Guarantee]
    Settings: ClassVar[type | None] = None

    def apply(self, program: Program, settings: Any = None) -> Transformed:
        raise NotImplementedError


class Identity(Transform):
    name = "none"
    summary = "the program as the front-end built it"
    guarantee = Guarantee.EXACT

    def apply(self, program: Program, settings: Any = None) -> Transformed:
        return Transformed(program, self.guarantee, _Same())


class RunOnInputs(BackTranslation):
    """For transforms that keep the program's input calls in order (LABMC, summaries): the original program
    *run* on the counterexample's `nondet` inputs, as a test (other havocs read 0; at a nondeterministic choice
    the first enabled edge is taken, a violating one first). Cheap, and it reaches bugs behind loops far longer
    than an unrolling could cover."""

    STEPS_PER_SECOND = 80_000      # measured: ~110k edges/s on a simple loop
    MAX_STEPS = 1_000_000          # a longer trace costs too much memory as evidence

    def trace(self, cex: Counterexample, original: Program, budget: float) -> Counterexample | None:
        steps = int(min(self.MAX_STEPS, self.STEPS_PER_SECOND * max(budget, 0.0)))
        if steps < 100:
            return None
        stop = Deadline.after(max(budget, 0.0))     # on the engine's clock: a pause does not spend it
        oracle = InputOracle(original, cex.inputs)
        res = run(original, oracle, choose=lambda edges: edges[0], max_steps=steps,
                  stop=stop.expired)
        if res.outcome != "violation":
            return None
        return Counterexample([TraceStep(e, e.src_loc, {}) for e in res.edges], list(cex.inputs),
                              violated_at=res.violated.src if res.violated is not None else None)


class _Same(BackTranslation):
    def trace(self, cex: Counterexample, original: Program, budget: float) -> Counterexample | None:
        return cex

    def invariant(self, evidence: Any) -> Any | None:
        return evidence
