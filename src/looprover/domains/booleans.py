"""Booleans: `b = true` / `b = false` when every sampled state agrees; for a loop body, persistence
`b ⇒ b'`, `¬b ⇒ ¬b'`.

Why: flags that are set once (or never) gate most assertions over Boolean state; persistence is transitive.
"""
from __future__ import annotations

import z3

from looprover.domains.base import Domain, Site
from looprover.program.expr import BoolConst, BoolType, Expr, Var, cmp


class Booleans(Domain):
    name = "booleans"
    relational = True

    def var_atoms(self, site: Site, v: Var) -> list[Expr]:
        if not isinstance(v.type, BoolType) or not site.samples:
            return []
        vals = {s[v.name] for s in site.samples}
        return [cmp("==", v, BoolConst(vals.pop()))] if len(vals) == 1 else []

    def var_relations(self, v: z3.ExprRef, w: z3.ExprRef) -> list[z3.BoolRef]:
        if v.sort().kind() != z3.Z3_BOOL_SORT:
            return []
        return [z3.Implies(v, w), z3.Implies(z3.Not(v), z3.Not(w))]
