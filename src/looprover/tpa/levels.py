"""One level of TPA's abstraction hierarchy as an incremental solver (design/algorithms.md B2: Golem keeps one
solver per level holding `ATr[n] ∧ ATr[n]'`, adds new lemmas to it, scopes each query with push/pop and rebuilds
it after ~100 pushes; `tpa/core.py` has the measurements behind that choice).
"""
from __future__ import annotations

import z3

from looprover.deadline import Deadline
from looprover.smt.solver import check, plain_solver


class LevelSolver:
    """Two-step reachability queries `ATr[n](x,x') ∧ ATr[n](x',x'') ∧ extra` for one level."""

    def __init__(self, ctx: z3.Context, base: list[z3.BoolRef], incremental: bool, rebuild_after: int):
        self.ctx = ctx
        self.base = list(base)
        self.incremental = incremental
        self.rebuild_after = rebuild_after
        self.solver: z3.Solver | None = None
        self.pushes = 0

    def strengthen(self, fs: list[z3.BoolRef]) -> None:
        self.base.extend(fs)
        if self.solver is not None:
            self.solver.add(*fs)

    def _fresh(self) -> z3.Solver:
        s = plain_solver(self.ctx)
        s.add(*self.base)
        return s

    def query(self, extra: list[z3.BoolRef], deadline: Deadline) -> z3.ModelRef | None:
        if not self.incremental:
            s = self._fresh()
            s.add(*extra)
            return s.model() if check(s, deadline) == z3.sat else None
        if self.solver is None or self.pushes >= self.rebuild_after:
            self.solver = self._fresh()
            self.pushes = 0
        s = self.solver
        s.push()
        self.pushes += 1
        try:
            s.add(*extra)
            return s.model() if check(s, deadline) == z3.sat else None
        finally:
            s.pop()
