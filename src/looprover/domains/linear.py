"""Linear equalities between two variables: `y = a·x + b` through the extreme sampled points; for a loop body,
`a·(u' - u) = b·(v' - v)` with the ratio of a sampled step.

Why: accumulators that grow proportionally to a counter (`y = 2x`, `s = 3i + 1`) need a line, not a
difference; the relational form is translation-invariant, hence transitive (TPA's seeds). Two samples only
suggest the coefficients; Houdini (or the seed filter) decides.
"""
from __future__ import annotations

import math
from collections.abc import Iterator

import z3

from looprover.domains.base import Domain, Site, StepSite
from looprover.program.expr import Expr, Var, binary, cmp, const


class Linear(Domain):
    name = "linear"
    relational = True

    def pair_atoms(self, site: Site, x: Var, y: Var) -> list[Expr]:
        """Slopes 0 and 1 are left to bounds and offsets; |a| ≤ 64."""
        if not site.samples:
            return []
        t = x.type
        pts = {(s[x.name], s[y.name]) for s in site.samples}
        xs = sorted({p[0] for p in pts})
        if len(xs) < 2:
            return []
        (x1, y1) = next(p for p in pts if p[0] == xs[0])
        (x2, y2) = next(p for p in pts if p[0] == xs[-1])
        if (y2 - y1) % (x2 - x1) != 0:
            return []
        a = (y2 - y1) // (x2 - x1)
        b = y1 - a * x1
        if a in (0, 1) or abs(a) > 64 or not t.contains(a) or not t.contains(b):
            return []
        return [cmp("==", y, binary("+", binary("*", const(a, t), x), const(b, t)))]

    def relations(self, site: StepSite) -> Iterator[z3.BoolRef]:
        """Made lazily: n variables give n² of them, of which the caller usually reads a few hundred."""
        nums = site.nums
        for d in site.deltas:
            for i in range(len(nums)):
                for j in range(i + 1, len(nums)):
                    if d[i] == 0 and d[j] == 0:
                        continue
                    g = math.gcd(d[i], d[j]) or 1
                    a, b = d[j] // g, d[i] // g
                    (u, u1), (v, v1) = nums[i], nums[j]
                    yield a * (u1 - u) == b * (v1 - v)
