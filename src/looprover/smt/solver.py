"""A thin z3 wrapper that turns an absolute deadline into per-call timeouts.

Engines hold a deadline (`EngineOptions.deadline`, monotonic seconds). Each `check` gets the remaining time as
its z3 timeout, so a run never overshoots by more than z3's reaction time; with no time left, `check` returns
`unknown` without calling z3. Python-side loops (encoding, unrolling) call `check_deadline` and get `OutOfTime`.
"""
from __future__ import annotations

import time

import z3


class OutOfTime(Exception):
    """The deadline passed while building formulas."""


def check_deadline(deadline: float | None) -> None:
    if deadline is not None and time.monotonic() >= deadline:
        raise OutOfTime()


def remaining_ms(deadline: float | None) -> int | None:
    if deadline is None:
        return None
    return int((deadline - time.monotonic()) * 1000)


class Solver:
    def __init__(self, deadline: float | None = None, solver: z3.Solver | None = None):
        self.deadline = deadline
        self.z3 = solver if solver is not None else z3.Solver()
        self.checks = 0
        self.check_time = 0.0

    def add(self, *fs: z3.BoolRef) -> None:
        self.z3.add(*fs)

    def check(self, *assumptions: z3.BoolRef, deadline: float | None = None) -> z3.CheckSatResult:
        """`sat`/`unsat`/`unknown`; `deadline` may tighten (never extend) the solver's deadline."""
        dl = self.deadline
        if deadline is not None:
            dl = deadline if dl is None else min(dl, deadline)
        ms = remaining_ms(dl)
        if ms is not None:
            if ms <= 0:
                return z3.unknown
            self.z3.set("timeout", max(1, ms))
        t = time.monotonic()
        try:
            return self.z3.check(*assumptions)
        finally:
            self.checks += 1
            self.check_time += time.monotonic() - t

    def model(self) -> z3.ModelRef:
        return self.z3.model()

    def reason_unknown(self) -> str:
        return self.z3.reason_unknown()

    def why_unknown(self) -> str:
        """'timeout' when the deadline has (nearly) passed, else z3's reason."""
        ms = remaining_ms(self.deadline)
        if ms is not None and ms < 200:
            return "timeout"
        return f"solver returned unknown ({self.z3.reason_unknown()})"

    def push(self) -> None:
        self.z3.push()

    def pop(self) -> None:
        self.z3.pop()
