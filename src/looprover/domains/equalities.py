"""Equalities with offsets: `x = y + d` when every sampled state has the same difference d (`x = y` when no
state was sampled).

Why: two counters stepping together (`i` and `j = i + 1`, a copy kept in sync) are invariant only as an
equality; the offset is read off the samples, Houdini decides whether it is inductive.
"""
from __future__ import annotations

from looprover.domains.base import Domain, Site
from looprover.program.expr import Expr, Var, binary, cmp, const


class Equalities(Domain):
    name = "equalities"

    def pair_atoms(self, site: Site, x: Var, y: Var) -> list[Expr]:
        if not site.samples:
            return [cmp("==", x, y)]
        ds = {s[x.name] - s[y.name] for s in site.samples}
        if len(ds) != 1:
            return []
        d = ds.pop()
        return [cmp("==", x, binary("+", y, const(d, x.type)))] if x.type.contains(d) else []
