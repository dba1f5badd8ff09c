"""Congruences: residues `v % m = r` and `x - y ≡ r (mod m)` that every sampled state shares; for a loop body,
`x' ≡ x (mod g)` with g the gcd of the sampled steps of x. The moduli of `v % m`: 2, 3, 4, 8, the program's
own constants up to `MAX_MODULUS` (a `% 10` in the code is a hint) and the gcd of the sampled values' spread
(values 10, 30, 70 share residue 0 mod 10 whatever the code says).

Why: parity facts (a counter stepping by 2, inner and outer counters that move together) are invisible to
bounds and differences but decide many loop properties (`x % 2 == 0` at exit). The relational form is
translation-invariant, hence transitive, which TPA's seeds need. Residues are C remainders (sign of the
dividend), matching `%` in the program IR.
"""
from __future__ import annotations

import math

import z3

from looprover.domains.base import Domain, Site, StepSite
from looprover.program.expr import Expr, IntType, Var, binary, cmp, const


MAX_MODULUS = 1000
SMALL_MODULI = (2, 3, 4, 8)


def moduli(site: Site, xs: list[int]) -> list[int]:
    """The moduli worth a residue atom over the values `xs`: the small ones, the program's constants, and the
    gcd of the values' differences when at least three distinct values share it."""
    ms = list(SMALL_MODULI) + [c for c in site.consts if 2 <= c <= MAX_MODULUS and c not in SMALL_MODULI]
    distinct = sorted(set(xs))
    if len(distinct) >= 3:
        g = 0
        for x in distinct[1:]:
            g = math.gcd(g, x - distinct[0])
        if 2 <= g <= MAX_MODULUS and g not in ms:
            ms.append(g)
    return ms


class Congruence(Domain):
    name = "congruence"
    relational = True

    def var_atoms(self, site: Site, v: Var) -> list[Expr]:
        """Only when the samples differ: on a pointer's id and offset, constant in most loops, the residues
        were a seventh of Houdini's candidates and two thirds of its time (MemSafety's cstrcmp: 8.3 s against
        2.9 s without them)."""
        t = v.type
        if not isinstance(t, IntType) or not site.samples:
            return []
        xs = [s[v.name] for s in site.samples]
        if len(set(xs)) == 1:
            return []       # a constant is the intervals' equality (`x >= c`, `x <= c`), which implies these
        out = []
        for m in moduli(site, xs):
            rs = {x % m if x >= 0 else -((-x) % m) for x in xs}
            if len(rs) == 1:
                out.append(cmp("==", binary("%", v, const(m, t)), const(rs.pop(), t)))
        return out

    def pair_atoms(self, site: Site, x: Var, y: Var) -> list[Expr]:
        """Only when the difference varies (a constant one is an equality, `equalities.py`)."""
        if not site.samples:
            return []
        ds = {s[x.name] - s[y.name] for s in site.samples}
        if len(ds) == 1:
            return []
        t = x.type
        out = []
        for m in (2, 4):
            rs = {(d % m) for d in ds}
            if len(rs) == 1:  # `(d - r) % m == 0` reads the same for either sign
                r = rs.pop()
                out.append(cmp("==", binary("%", binary("-", x, y), const(m, t)), const(0, t)) if r == 0 else
                           cmp("==", binary("%", binary("-", binary("-", x, y), const(r, t)), const(m, t)),
                               const(0, t)))
        return out

    def relations(self, site: StepSite) -> list[z3.BoolRef]:
        steps = [0] * len(site.nums)
        for d in site.deltas:
            steps = [math.gcd(g, abs(di)) for g, di in zip(steps, d)]
        return [(w - v) % g == 0 for (v, w), g in zip(site.nums, steps) if g >= 2]
