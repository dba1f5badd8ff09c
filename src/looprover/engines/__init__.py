"""Verification engines: `verify(program, options) -> Verdict`, looked up by name."""
from __future__ import annotations

import importlib
import time
from dataclasses import dataclass, field
from typing import Callable

from looprover.program.cfa import Program
from looprover.verdict import Verdict


@dataclass
class EngineOptions:
    timeout: float = 60.0             # seconds for this engine run
    bitvector: bool = False           # bit-precise encoding instead of integers with explicit wrap-around
    max_bound: int | None = None      # engine-specific cap on unwinding / k (None: until the deadline)
    progress: Callable[[str], None] | None = None   # called with short status lines on long runs
    start: float = field(default_factory=time.monotonic)

    @property
    def deadline(self) -> float:
        return self.start + self.timeout

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def report(self, msg: str) -> None:
        if self.progress is not None:
            self.progress(msg)


# name -> module path; each module defines `verify(program, options) -> Verdict`
ENGINES: dict[str, str] = {
    "bmc": "looprover.engines.bmc",
    "kinduction": "looprover.engines.kinduction",
    "labmc": "looprover.engines.labmc",
    "multiloop": "looprover.engines.multiloop",
    "portfolio": "looprover.portfolio",
    "tpa": "looprover.engines.tpa",
}


def get_engine(name: str) -> Callable[[Program, EngineOptions], Verdict]:
    if name not in ENGINES:
        raise KeyError(f"unknown engine {name!r}; known: {', '.join(sorted(ENGINES))}")
    return importlib.import_module(ENGINES[name]).verify
