"""Type ranges: `min ≤ v ≤ max` for every bounded integer variable, at every location.

Why: under mathematical-integer semantics (no bit-vectors) the encoding does not know that a C `int` stays in
range on paths without overflow; these atoms hold everywhere the program has no undefined behaviour, and
Houdini keeps them when the transition relation preserves them. With bit-vectors they are tautologies.
"""
from __future__ import annotations

from looprover.domains.base import Domain, Site
from looprover.program.expr import Expr, IntType, Var, cmp, const


class TypeRanges(Domain):
    name = "ranges"
    everywhere = True

    def var_atoms(self, site: Site, v: Var) -> list[Expr]:
        t = v.type
        if site.bitvector or not isinstance(t, IntType) or not t.bounded:
            return []
        return [cmp(">=", v, const(t.min, t)), cmp("<=", v, const(t.max, t))]
