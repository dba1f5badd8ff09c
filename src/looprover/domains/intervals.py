"""Intervals: bounds `v ≥ k`, `v ≤ k` from program constants, the guards' limits and sampled states; for a loop body, bound
preservation `t ≤ k ⇒ t' ≤ k` for the loop's comparison atoms.

Why: most loop invariants that matter bound a counter by a constant of the program (the loop guard's limit,
an initial value); the sampled extremes give the tightest bounds, the constants the ones that generalise. The
relational form is transitive (a bound once reached is kept), which is what TPA's seeds need.
"""
from __future__ import annotations

import z3

from looprover.domains.base import Domain, Site, StepSite
from looprover.program.expr import Expr, IntType, Var, cmp, const


class Intervals(Domain):
    name = "intervals"
    relational = True

    def var_atoms(self, site: Site, v: Var) -> list[Expr]:
        t = v.type
        if not isinstance(t, IntType):
            return []
        kc = [k for k in site.consts if t.contains(k)]
        if not site.samples:
            return [a for k in kc[:8] for a in (cmp(">=", v, const(k, t)), cmp("<=", v, const(k, t)))]
        xs = [s[v.name] for s in site.samples]
        lo, hi = min(xs), max(xs)
        out = [cmp(">=", v, const(lo, t)), cmp("<=", v, const(hi, t))]
        below = [k for k in kc if k <= lo]
        above = [k for k in kc if k >= hi]
        if below:
            out.append(cmp(">=", v, const(max(below), t)))
        if above:
            out.append(cmp("<=", v, const(min(above), t)))
        out += [cmp(op, v, const(k, t)) for op, k in site.guard_bounds.get(v.name, [])
                if t.contains(k) and (k >= hi if op == "<=" else k <= lo)]
        return out

    def relations(self, site: StepSite) -> list[z3.BoolRef]:
        """Atom persistence and bound preservation for each atom `lhs ⋈ rhs`."""
        out: list[z3.BoolRef] = []
        for atom in site.atoms:
            a1 = site.to_post(atom)
            out += [z3.Implies(atom, a1), z3.Implies(z3.Not(atom), z3.Not(a1))]
            lhs, rhs = atom.arg(0), atom.arg(1)
            if z3.is_bv(lhs):
                # t ⋈ c with a numeral c: the bounds c-1, c, c+1 in both signednesses (wrap-around is fine: every
                # candidate is checked, only its shape is guessed here)
                for t, c in ((lhs, rhs), (rhs, lhs)):
                    if not z3.is_bv_value(c) or z3.is_bv_value(t):
                        continue
                    t1 = site.to_post(t)
                    for d in (-1, 0, 1):
                        k = z3.BitVecVal(c.as_long() + d, c.size(), site.ctx)
                        out += [z3.Implies(z3.ULE(t, k), z3.ULE(t1, k)), z3.Implies(z3.UGE(t, k), z3.UGE(t1, k)),
                                z3.Implies(t <= k, t1 <= k), z3.Implies(t >= k, t1 >= k)]
                continue
            t = lhs - rhs
            t1 = site.to_post(t)
            for k in ((-1, 0, 1) if t.sort().kind() == z3.Z3_INT_SORT else (0,)):
                out += [z3.Implies(t <= k, t1 <= k), z3.Implies(t >= k, t1 >= k)]
        return out
