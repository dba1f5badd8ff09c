"""Verdicts and the evidence they carry.

A TRUE comes from a proof (exact, or over a sound over-approximation); a FALSE only with a counterexample that
replayed on the original program; everything else is UNKNOWN with a reason.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from looprover.program.cfa import Edge, SrcLoc


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
    on the original program with the concrete interpreter.
    """
    steps: list[TraceStep]
    inputs: list[Any]
    initial: dict[str, Any] = field(default_factory=dict)
    validated: bool = False
    violated_at: SrcLoc | None = None


@dataclass
class Verdict:
    status: Status
    engine: str
    reason: str
    evidence: Any = None          # Counterexample for FALSE; invariant/certificate for TRUE, if any
    stats: dict[str, Any] = field(default_factory=dict)
    time: float = 0.0

    @staticmethod
    def unknown(engine: str, reason: str, **stats) -> "Verdict":
        return Verdict(Status.UNKNOWN, engine, reason, stats=dict(stats))
