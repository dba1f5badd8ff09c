"""Verdicts and the evidence they carry.

A TRUE comes from a proof (exact, or over a sound over-approximation); a FALSE only with evidence that was
checked on the original program -- for a safety property a counterexample that replayed, for termination a
non-termination witness (`NonTermination`) that passed its independent check; everything else is UNKNOWN
with a reason.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from looprover.program.cfa import Assert, Edge, SrcLoc
from looprover.program.expr import Expr


class Status(str, Enum):
    TRUE = "TRUE"
    FALSE = "FALSE"
    UNKNOWN = "UNKNOWN"


@dataclass
class TraceStep:
    """One CFA edge of a counterexample and the values of the variables it wrote (C names where known)."""
    edge: Edge
    src: SrcLoc | None
    values: dict[str, Any] = field(default_factory=dict)


@dataclass
class Counterexample:
    """A concrete execution reaching a violated assertion.

    `inputs` are the values returned by the `nondet` havocs in order (what a test harness feeds);
    `initial` the initial values of the program variables; `validated` is set once the trace has replayed
    on the original program with the concrete interpreter. `violated` is the assertion that failed (an `Assert`;
    set by the validating run), whose property names what was violated (`FALSE(no-overflow)`).
    """
    steps: list[TraceStep]
    inputs: list[Any]
    initial: dict[str, Any] = field(default_factory=dict)
    validated: bool = False
    violated_at: SrcLoc | None = None
    violated: Any = None

    def failed_check(self, prop: str) -> Assert | None:
        """The failed assertion if it has property `prop`. A run that did not record which assertion failed (a
        compiled run) counts an assertion of `prop` on its last edge."""
        a = self.violated
        if a is None and self.steps:
            a = next((s for s in self.steps[-1].edge.stmts if isinstance(s, Assert) and s.prop == prop), None)
        return a if isinstance(a, Assert) and a.prop == prop else None


@dataclass
class LeapingCounterexample(Counterexample):
    """A counterexample of a loop-summarized program (`transforms/summarize.py`) that did not replay on the
    original: it may leap over iterations through a summary, so it is shown (under its own name), never a
    FALSE. `program` is the summarized program its steps run on."""
    program: Any = None


@dataclass
class NonTermination:
    """An infinite execution as a lasso: a concrete stem from the program's start to the loop location `head`,
    then the cycle `loop` (CFA edges from `head` back to `head`) forever.

    The stem is concrete: the initial values, every havoc value in order (`stem_havocs`) and the edges taken.
    The cycle is symbolic: `recurrent` is a set of states at `head` (an IR formula over the program variables)
    that contains the stem's last state, from every state of which `loop` runs to the end with the havoc values
    `loop_havocs` (the same nondet choices in every round) without blocking, failing an assertion or undefined
    behaviour, and ends in `recurrent` again. `validated` is set only by the independent check
    (`evidence.nontermination.validate_nontermination`): the stem replayed with the interpreter, `recurrent`
    evaluated on its last state, the closure decided by a fresh solver.
    """
    head: int
    stem: list[Edge]
    stem_initial: dict[str, Any]
    stem_havocs: list[Any]
    loop: list[Edge]
    loop_havocs: list[Any]
    recurrent: Expr
    validated: bool = False
    inputs: list[Any] = field(default_factory=list)   # the stem's nondet inputs (what a harness feeds)
    where: SrcLoc | None = None                          # source position of the loop


@dataclass
class Verdict:
    status: Status
    engine: str
    reason: str
    evidence: Any = None          # Counterexample / NonTermination for FALSE; proof for TRUE, if any
    stats: dict[str, Any] = field(default_factory=dict)
    time: float = 0.0

    @staticmethod
    def unknown(engine: str, reason: str, **stats) -> "Verdict":
        return Verdict(Status.UNKNOWN, engine, reason, stats=dict(stats))
