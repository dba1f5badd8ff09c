"""The one deadline type: an absolute `time.monotonic()` instant that every budget derives from.

Why one type: a run's limit is set once (the user's `--timeout`, counted from the start of `verify`) and then
shared by the front-end, the engines, their solver calls, interpolation, MBP and QE. Each of those used to carry
its own float or class; now they all hold a `Deadline`, tighten it with `cap` for a sub-task, and raise the
same `OutOfTime` when it passes. The guarded engine runner (`engines/base.py`) turns `OutOfTime` into
UNKNOWN("timeout ..."); nothing else needs to catch it.

Deadlines read the time from one clock per process (`use_clock`): the wall clock, except in a portfolio's engine,
whose clock (`timeshare.ShareClock`) stands still while the engine is paused. A budget an engine plans ("Houdini
gets a third of the time left") is then running time of its own, not wall time that passes while other engines
take their turns.
"""
from __future__ import annotations

import math
import time

# Seconds past its deadline before a verify job's process is killed (`jobs.run_job_limited`).
KILL_GRACE = 1.0
# How far the job's own work may run past its deadline (the portfolio waiting for engines that ignore it, the
# check of a witness's invariants): half the grace, so the job still answers, with its reasons, before it is
# killed. With equal graces the portfolio's kill and the job's raced: a 60 s CHC run killed at 61.5 s reported
# only 'timeout while running the engine'.
PAST_DEADLINE = KILL_GRACE / 2


class Clock:
    """The wall clock (`time.monotonic`), on which deadlines are set."""

    def now(self) -> float:
        return time.monotonic()


_clock: Clock = Clock()


def use_clock(clock: Clock) -> None:
    """Make every deadline of this process (and of the children it forks later) read `clock`."""
    global _clock
    _clock = clock


def now() -> float:
    """The instant deadlines compare with: for a deadline of one's own, `Deadline(now() + ...)`."""
    return _clock.now()


class OutOfTime(Exception):
    """The deadline passed: the run ends with UNKNOWN."""


class Deadline:
    """An absolute instant on this process's clock; `Deadline.never()` for no limit (tests, library use)."""

    __slots__ = ("at",)

    def __init__(self, at: float):
        self.at = at

    @staticmethod
    def after(seconds: float) -> "Deadline":
        return Deadline(_clock.now() + seconds)

    @staticmethod
    def never() -> "Deadline":
        return Deadline(math.inf)

    @property
    def unlimited(self) -> bool:
        return self.at == math.inf

    def left(self) -> float:
        """Seconds left (negative once passed, `inf` for no limit)."""
        return self.at - _clock.now()

    def expired(self) -> bool:
        return self.left() <= 0

    def check(self) -> None:
        """Raise OutOfTime if the deadline has passed (for Python-side loops: encoding, unrolling, search)."""
        if _clock.now() >= self.at:
            raise OutOfTime()

    def cap(self, seconds: float | None) -> "Deadline":
        """The earlier of this deadline and `seconds` from now (a sub-task's own budget)."""
        if seconds is None:
            return self
        return Deadline(min(self.at, _clock.now() + max(seconds, 0.0)))

    def earliest(self, other: "Deadline | None") -> "Deadline":
        return self if other is None or self.at <= other.at else other

    def ms(self, cap: float | None = None) -> int:
        """Milliseconds left (≥ 1) for a z3 `timeout` parameter, optionally capped at `cap` seconds; raises
        OutOfTime when nothing is left. z3 reads the parameter as an unsigned int, so no limit is 2^32-1."""
        left = self.left() if cap is None else min(self.left(), cap)
        if left <= 0:
            raise OutOfTime()
        return max(1, int(min(left * 1000, 4_294_967_295)))

    def __repr__(self) -> str:
        return "Deadline(never)" if self.unlimited else f"Deadline(in {self.left():.3f} s)"
