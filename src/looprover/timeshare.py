"""Time-sharing of child processes over the usable cores: at most one running child per core.

Why: the portfolio runs one process per engine, and there are more engines than cores (2 on our machines).
Started all at once they compete for the cores, and every engine gets a fraction of the time limit with no say in
which one first. Killing an engine at the end of a short slice throws its work away (BMC's unrolling, TPA's
levels). So the children take turns instead: a child whose slice is over is paused (SIGSTOP, it keeps its memory
and its state) and resumed (SIGCONT) at its next turn.

The schedule, in the order the children are given (the portfolio puts cheap engines first):
  * while there are no more children than cores, every child simply runs to the end;
  * otherwise in rounds: each round, every child that has not finished gets one slice, `cores` children at a
    time; the slice doubles from round to round (`first_slice`, 2·`first_slice`, ...), so the cheap engines at
    the front get a short first look, a task that needs a long run still gets long uninterrupted stretches,
    and over a long run every engine gets about an equal share of the cores;
  * a child that finishes frees its core at once for the next one in turn.

Each child's deadlines read its own clock (`ShareClock`, installed by the caller's child function), which stands
still while the child is paused: the budgets an engine derives from its deadline ("a third of the time left")
are its own running time, as if it ran alone until the deadline, not wall time spent waiting for its turn. The
child is still killed at the wall-clock deadline. (A clock that also ran faster by the number of children per
core, so that an engine planned with the running time it can expect, lost three SV-COMP dev tasks at 20 s that
this one keeps: k-induction's Houdini got less than the first turns actually give it.) A solver call capped at a
few seconds that is paused in the middle sees z3's own wall-clock timer expire when it resumes (`smt/solver.py`
asks again then); an uncapped one's timer cannot expire before the wall-clock deadline.
"""
from __future__ import annotations

import os
import time
from collections import deque
from typing import Callable

from looprover.deadline import Clock
from looprover.processes import Child, shared_doubles


class ShareClock(Clock):
    """A child's clock under time-sharing: the wall clock less the time the child has spent paused. It lives in
    memory its parent writes and the child reads; the parent writes only around a pause or a resume, and a
    sequence number (odd while a write is under way) makes the child read again what a pause cut in two."""

    def __init__(self, now: float, wall: Callable[[], float] = time.monotonic):
        # [sequence, wall anchor, clock anchor, running]: while running, the clock reads
        # anchor + (wall now - wall anchor); while paused, the anchor
        self._cells = shared_doubles(4)
        self._wall = wall
        self._write(now, now, True)

    def _write(self, wall: float, at: float, running: bool) -> None:
        c = self._cells
        c[0] += 1
        c[1], c[2], c[3] = wall, at, 1.0 if running else 0.0
        c[0] += 1

    def now(self) -> float:
        c = self._cells
        while True:
            seq = c[0]
            wall, at, running = c[1], c[2], c[3]
            w = self._wall()        # before the check: a pause after it then cannot count as running time
            if seq % 2 == 0 and c[0] == seq:
                return at + (w - wall) if running else at

    def pause(self, now: float) -> None:
        """Stop the clock at `now` (wall) (the parent, once the child is stopped)."""
        c = self._cells
        if c[3]:
            self._write(now, c[2] + (now - c[1]), False)

    def resume(self, now: float) -> None:
        """Start the clock again at `now` (wall) (the parent, before it resumes the child)."""
        c = self._cells
        if not c[3]:
            self._write(now, c[2], True)


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, which container limits and `taskset` narrow)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class TimeShare:
    """Runs the children `start(i, clock)` creates (i = 0..n-1) so that at most `cores` run at any moment; a
    child's deadlines are to read `clock` (`deadline.use_clock`).

    `poll(timeout)` waits for results; the caller takes each finished child's result and decides when to stop
    (`kill_all`). Children are created lazily, at their first turn, so an answer found by a cheap engine means
    the expensive ones never start. A child's k-th turn lasts `first_slice`·2^k."""

    def __init__(self, n: int, start: Callable[[int, ShareClock], Child], cores: int, first_slice: float,
                 clock: Callable[[], float] = time.monotonic):
        self.n, self.start, self.cores, self.clock = n, start, max(1, cores), clock
        self.first_slice = max(first_slice, 0.01)
        self.children: dict[int, Child] = {}        # started children, by index
        self.clocks: dict[int, ShareClock] = {}     # their clocks
        self.turn = [0] * n                         # turns each child has had
        self.done: set[int] = set()
        self.running: dict[int, float] = {}         # index -> end of its current turn
        self.waiting: deque[int] = deque(range(n))  # in turn order
        self.max_running = 0                        # the most children ever running at once
        self.pauses = 0
        self._fill()

    def _slice(self, i: int) -> float:
        if self.n <= self.cores:
            return float("inf")                     # nothing to share: run to the end
        return self.first_slice * 2 ** self.turn[i]

    def _fill(self) -> None:
        """Give each free core to the next waiting child."""
        while len(self.running) < self.cores and self.waiting:
            i = self.waiting.popleft()
            if i in self.children:
                self.clocks[i].resume(time.monotonic())
                self.children[i].resume()
            else:
                self.clocks[i] = ShareClock(time.monotonic())
                self.children[i] = self.start(i, self.clocks[i])
            self.running[i] = self.clock() + self._slice(i)
            self.turn[i] += 1
        self.max_running = max(self.max_running, len(self.running))

    def _rotate(self) -> None:
        """At the end of a turn: pause the child and queue it again if another one waits, else extend the turn."""
        now = self.clock()
        for i, end in list(self.running.items()):
            if end > now:
                continue
            if not self.waiting:
                self.running[i] = now + self._slice(i)
                self.turn[i] += 1
                continue
            self.children[i].pause()
            self.clocks[i].pause(time.monotonic())
            self.pauses += 1
            del self.running[i]
            self.waiting.append(i)
        self._fill()

    def poll(self, timeout: float) -> list[tuple[int, Child]]:
        """Give free cores to waiting children, then wait at most `timeout` seconds (less when a turn ends first)
        for finished children; returns them as (index, child), each with its result ready (`child.result()`)."""
        self._rotate()
        if not self.running:
            return []
        until_switch = min(self.running.values()) - self.clock()
        by_conn = {self.children[i]: i for i in self.running}
        out = []
        for child in Child.wait(list(by_conn), max(0.0, min(timeout, until_switch))):
            i = by_conn[child]
            del self.running[i]
            self.done.add(i)
            out.append((i, child))
        return out          # the freed cores are given out at the next poll, if the caller goes on

    def finished(self) -> bool:
        return len(self.done) == self.n

    def unfinished(self) -> list[int]:
        """Children that have not finished, started or not."""
        return [i for i in range(self.n) if i not in self.done]

    def kill_all(self) -> None:
        """Kill every started child that has not finished (paused ones too)."""
        for i, child in self.children.items():
            if i not in self.done:
                child.kill()
        self.running.clear()
        self.waiting.clear()
