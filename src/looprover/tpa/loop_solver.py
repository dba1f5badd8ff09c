"""TPA on one transition system with unsigned wrap-around split off as a side obligation (smt/nowrap.py).

Shared by the single-system engine (`engines/tpa.py`) and the multi-loop network (one per loop body), so both
use the same split, the same fallback to the exact system, and the same soundness argument.
"""
from __future__ import annotations

import z3

from looprover.smt.nowrap import split_wraps
from looprover.smt.ts import TransitionSystem
from looprover.tpa.core import TPA
from looprover.tpa.split import make_tpa
from looprover.tpa.options import TPAOptions
from looprover.deadline import Deadline
from looprover.tpa.result import TPAResult, TPAStatus, z3_value
from looprover.smt.solver import plain_solver

WRAP_QE = 2.0              # seconds for the wrap states of one body (quantifier elimination)


class LoopSolver:
    """TPA on one transition relation with unsigned wrap-around split off: a query runs on the wrap-free relation
    with "a wrap step is possible" added to Bad, and on the exact relation only when the run found ends in the
    wrap part (or the query's start already intersects it). Both TPA instances keep their levels
    across queries. Sound for SAFE: Bad ∨ Wrap unreachable under the wrap-free body means Bad is unreachable
    under the exact one; the safety explanation of the wrap-free run inherits that."""

    def __init__(self, ts: TransitionSystem, options: TPAOptions | None, deadline: Deadline):
        """Raises GiveUp like `TPA` (e.g. for array state variables)."""
        self.ts, self.opt = ts, options
        split = split_wraps(ts.trans, ts.state, deadline.cap(WRAP_QE))
        self.wrap_bad = None if split is None else split[1]
        self.free = None if split is None else make_tpa(ts.with_trans(split[0]), options)
        self.exact: TPA | None = None

    def solve(self, init: z3.BoolRef, bad: z3.BoolRef, deadline: Deadline) -> tuple[TPAResult, TPA]:
        """(result, the TPA instance that produced it -- its `safety_explanation` goes with the result)."""
        left = deadline.left()
        if self.free is not None and not may_be_sat(z3.And(init, self.wrap_bad), min(1.0, left)):
            self.free.reset_query(init, z3.Or(bad, self.wrap_bad))
            res = self.free.solve(deadline)
            if res.status == TPAStatus.SAFE:
                return res, self.free
            if res.status == TPAStatus.UNSAFE and holds(self.ts.state, bad, res.witness.final):
                w = res.witness
                if w.target is not None:      # its target may include wrap states that are not in Bad
                    w.target = z3.And(w.target, bad)
                return res, self.free
            if res.status == TPAStatus.UNKNOWN and deadline.expired():
                return res, self.free
        if self.exact is None:
            self.exact = make_tpa(self.ts, self.opt)
        self.exact.reset_query(init, bad)
        return self.exact.solve(deadline), self.exact


def may_be_sat(f: z3.BoolRef, seconds: float) -> bool:
    """Satisfiable, or not shown unsatisfiable within `seconds`."""
    s = plain_solver(f.ctx)
    s.set("timeout", max(1, int(seconds * 1000)))
    s.add(f)
    return s.check() != z3.unsat


def holds(xs: list[z3.ExprRef], f: z3.BoolRef, state) -> bool:
    """Does the concrete `state` (values of `xs`) satisfy the formula `f` over `xs`?"""
    vals = [z3_value(v, x.sort()) for x, v in zip(xs, state)]
    return z3.is_true(z3.simplify(z3.substitute(f, *zip(xs, vals)))) if xs else z3.is_true(z3.simplify(f))
