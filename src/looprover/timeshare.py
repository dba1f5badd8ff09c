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

Each child's deadlines read its own clock (`ShareClock`, installed by the caller's child function): it stands
still while the child is paused and, while it runs, goes as many times faster than the wall clock as there are
unfinished children per core (the rate is set anew at each turn). So the common deadline, set on the wall clock,
arrives on the child's clock after about the running time the child can expect, and the budgets an engine derives
from it ("a third of the time left") are parts of that running time, not of wall time spent paused. The child is
still killed at the wall-clock deadline. A solver call paused in the middle sees z3's own wall-clock timer expire
when it resumes (`smt/solver.py` asks again then).
"""
from __future__ import annotations

import os
import time
from collections import deque
from typing import Callable

from looprover.deadline import Clock
from looprover.processes import Child, shared_doubles


class ShareClock(Clock):
    """A child's clock under time-sharing, in memory its parent writes and it reads (`read`, the `Clock`
    interface). The parent writes only while the child is stopped or has not started, and a sequence number
    (odd while a write is under way) makes the child retry a read that a pause cut in two."""

    def __init__(self, now: float, rate: float, wall: Callable[[], float] = time.monotonic):
        # [sequence, wall anchor, clock anchor, rate, running]: while running, the clock reads
        # anchor + (wall now - wall anchor) * rate; while paused, the anchor
        self._cells = shared_doubles(5)
        self._wall = wall
        self._write(now, now, rate, True)

    def _write(self, wall: float, at: float, rate: float, running: bool) -> None:
        c = self._cells
        c[0] += 1
        c[1], c[2], c[3], c[4] = wall, at, rate, 1.0 if running else 0.0
        c[0] += 1

    def read(self) -> tuple[float, float]:
        c = self._cells
        while True:
            seq = c[0]
            wall, at, rate, running = c[1], c[2], c[3], c[4]
            if seq % 2 == 0 and c[0] == seq:
                break
        return (at + (self._wall() - wall) * rate if running else at), rate

    def pause(self, now: float) -> None:
        """Stop the clock at `now` (wall) (the parent, once the child is stopped)."""
        self.set(now, running=False)

    def set(self, now: float, rate: float | None = None, running: bool | None = None) -> None:
        """From `now` (wall) on, run at `rate` and/or run or stand still (the parent; safe while the child
        reads, which then reads again)."""
        c = self._cells
        at = c[2] + (now - c[1]) * c[3] if c[4] else c[2]
        self._write(now, at, c[3] if rate is None else rate, bool(c[4]) if running is None else running)


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

    def rate(self) -> float:
        """How many times faster than the wall clock a running child's clock goes: the unfinished children per
        core (1 when there are no more than cores)."""
        return max(1.0, (self.n - len(self.done)) / self.cores)

    def _fill(self) -> None:
        """Give each free core to the next waiting child."""
        while len(self.running) < self.cores and self.waiting:
            i = self.waiting.popleft()
            if i in self.children:
                self.clocks[i].set(time.monotonic(), self.rate(), running=True)
                self.children[i].resume()
            else:
                self.clocks[i] = ShareClock(time.monotonic(), self.rate())
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
        if out:     # fewer children share the cores: the others' clocks slow down
            now, rate = time.monotonic(), self.rate()
            for i in self.children.keys() - self.done:
                self.clocks[i].set(now, rate)
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
