"""Zones (differences with bound 0): `x ≤ y`, `x ≥ y` between two variables; for a loop body, monotonicity
`x' ≥ x`, `x' ≤ x` of each variable (and, for bit-vectors, `x' = x` and the unsigned forms).

Why: orderings between counters (`i ≤ n`, `j ≤ i`) are the relational facts nested loops need most, and a
variable that only grows or only shrinks is the cheapest transitive fact about a loop.
"""
from __future__ import annotations

import z3

from looprover.domains.base import Domain, Site
from looprover.program.expr import Expr, Var, cmp


class Zones(Domain):
    name = "zones"
    relational = True

    def pair_atoms(self, site: Site, x: Var, y: Var) -> list[Expr]:
        return [cmp("<=", x, y), cmp(">=", x, y)]

    def var_relations(self, v: z3.ExprRef, w: z3.ExprRef) -> list[z3.BoolRef]:
        kind = v.sort().kind()
        if kind in (z3.Z3_INT_SORT, z3.Z3_REAL_SORT):
            return [w >= v, w <= v]
        if kind == z3.Z3_BV_SORT:
            return [w == v, z3.UGE(w, v), z3.ULE(w, v), w >= v, w <= v]
        return []
