"""Octagon rows with constants: `x - y ⋈ c` and `x + y ⋈ c`, with c the extremes of the sampled states.

Why: zones (`zones.py`) only order two variables (c = 0); loops that move two counters in lockstep or in
opposite directions (`i += 2; j -= 1` until they cross) keep a difference or a sum within constant bounds,
and the exit value of one counter follows from the other only through that bound. Sampled extremes are
guesses; the caller's inductiveness check decides.
"""
from __future__ import annotations

from looprover.domains.base import Domain, Site
from looprover.program.expr import Expr, IntType, Var, binary, cmp, const


class Octagon(Domain):
    name = "octagon"

    def pair_atoms(self, site: Site, x: Var, y: Var) -> list[Expr]:
        t = x.type
        if not isinstance(t, IntType) or not site.samples:
            return []
        out: list[Expr] = []
        for op in ("-", "+"):
            vals = [s[x.name] - s[y.name] if op == "-" else s[x.name] + s[y.name] for s in site.samples]
            lo, hi = min(vals), max(vals)
            if lo == hi and op == "-":
                continue                      # a constant difference is an equality (`equalities.py`)
            e = binary(op, x, y)
            out += [cmp(">=", e, const(lo, t)) if t.contains(lo) else None,
                    cmp("<=", e, const(hi, t)) if t.contains(hi) else None]
        return [a for a in out if a is not None]
