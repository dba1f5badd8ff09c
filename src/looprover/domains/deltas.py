"""Deltas: `a·(x - x0) == b·(y - y0)` between the changes two variables made since the loop's entry
(x0, y0: the entry copies a loop summary keeps, `Site.entry`), with a : b read off a sampled state.

Why: a loop that moves two variables by proportional steps (`cnt--; res++`) keeps `res + cnt` constant, but
the constant is the entry value, not a number of the program: only a relation to the entry copies states it.
This is the relational form of `linear.py` over (entry, now) instead of one step.
"""
from __future__ import annotations

import math

from looprover.domains.base import Domain, Site
from looprover.program.expr import Expr, IntType, Var, binary, cmp, const


class Deltas(Domain):
    name = "deltas"

    def pair_atoms(self, site: Site, x: Var, y: Var) -> list[Expr]:
        x0, y0 = site.entry.get(x.name), site.entry.get(y.name)
        t = x.type
        if x0 is None or y0 is None or not isinstance(t, IntType) or not site.samples:
            return []
        steps = [(s[x.name] - s[x0.name], s[y.name] - s[y0.name]) for s in site.samples]
        moved = next(((dx, dy) for dx, dy in steps if dx or dy), None)
        if moved is None:
            return []
        g = math.gcd(*moved)
        a, b = moved[1] // g, moved[0] // g             # a·dx == b·dy
        if not all(a * dx == b * dy for dx, dy in steps) or max(abs(a), abs(b)) > 64:
            return []
        return [cmp("==", binary("*", const(a, t), binary("-", x, x0)),
                    binary("*", const(b, t), binary("-", y, y0)))]
