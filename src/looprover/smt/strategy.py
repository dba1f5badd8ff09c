"""Template synthesis by strategy iteration (2LS, design notes section C): bounds d_r ∈ Z ∪ {+∞} for rows
`t_r ≤ d_r` such that the conjunction of all rows is inductive over one step,

    background ∧ ⋀_r pre_r ≤ d_r  ⇒  ⋀_r post_r ≤ d_r.

Why a separate algorithm next to `houdini.py`: houdini can only drop guessed facts, so it needs the right
constant among its candidates; here the constants are found. Starting from the given initial bounds (the
caller's entry values), a violated row r is raised to one more than the largest s at which it is still
violated with the other rows at their bounds (`z3.Optimize`, which also jumps over the ~2^w Kleene rounds of
an `i++` loop), or to +∞ when that largest s is unbounded, reaches `cap` or the optimiser gives up. Rows bound
each other (δx ≤ 27 caps δx + δy), so the raises of an unbounded row would creep up forever: a row violated
again after `widen` raises goes to +∞ (widening). Bounds only grow, so a row that held initially still holds. The iteration is a heuristic; soundness comes only from the
final check of the whole conjunction, which must be UNSAT or nothing is returned.
"""
from __future__ import annotations

from typing import Sequence

import z3

from looprover.deadline import Deadline, OutOfTime
from looprover.errors import GiveUp
from looprover.smt.solver import check


def synthesize(background: Sequence[z3.BoolRef], pre: Sequence[z3.ArithRef], post: Sequence[z3.ArithRef],
               start: Sequence[int], deadline: Deadline, *, cap: int = 1 << 20, widen: int = 1,
               rounds: int | None = None, query_timeout: float = 2.0) -> list[int | None] | None:
    """Bounds per row (None = +∞) whose conjunction passed the final inductiveness check, or None when no
    check succeeded within `rounds` raises (default: enough for every row to reach +∞) or the solver gave
    up. Integer terms only."""
    d: list[int | None] = list(start)
    raised = [0] * len(d)
    for _ in range(rounds if rounds is not None else (widen + 1) * len(d) + 1):
        r = _violated(background, pre, post, d, deadline, query_timeout)
        if r is None:
            return d if inductive(background, pre, post, d, deadline, query_timeout) else None
        raised[r] += 1
        d[r] = None if raised[r] > widen else _raise(background, pre, post, d, r, deadline, cap, query_timeout)
    return None


def _bounded(pre, d) -> list[z3.BoolRef]:
    return [p <= b for p, b in zip(pre, d) if b is not None]


def _violated(background, pre, post, d, deadline: Deadline, query_timeout: float) -> int | None:
    """A row some step leaves above its bound (from a state within all bounds), or None if there is none
    (None also when the solver gives up: the final check then decides)."""
    s = z3.Solver()
    s.add(*background, *_bounded(pre, d))
    s.add(z3.Or(*[q > b for q, b in zip(post, d) if b is not None] or [z3.BoolVal(False)]))
    try:
        if check(s, deadline, cap=query_timeout) == z3.unsat:
            return None
    except GiveUp:
        return None
    m = s.model()
    return next(r for r, (q, b) in enumerate(zip(post, d))
                if b is not None and z3.is_true(m.eval(q > b, model_completion=True)))


def _raise(background, pre, post, d, r: int, deadline: Deadline, cap: int, query_timeout: float) -> int | None:
    """The least bound for row r above every s at which it is still violated (others at their bounds)."""
    s = z3.Int(f"!bound{r}")
    o = z3.Optimize()
    o.set("timeout", deadline.ms(query_timeout))
    o.add(*background, *_bounded([p for i, p in enumerate(pre) if i != r], [b for i, b in enumerate(d) if i != r]))
    o.add(pre[r] <= s, post[r] > s, s >= d[r], s <= cap)
    best = o.maximize(s)
    if o.check() != z3.sat:
        if deadline.expired():
            raise OutOfTime()
        return None
    v = best.value()
    return None if not z3.is_int_value(v) or v.as_long() >= cap else v.as_long() + 1


def inductive(background, pre, post, d, deadline: Deadline, query_timeout: float) -> bool:
    """The one final check: the conjunction of all bounded rows is preserved by a step."""
    s = z3.Solver()
    s.add(*background, *_bounded(pre, d))
    s.add(z3.Or(*[q > b for q, b in zip(post, d) if b is not None] or [z3.BoolVal(False)]))
    try:
        return check(s, deadline, cap=query_timeout) == z3.unsat
    except GiveUp:
        return False
