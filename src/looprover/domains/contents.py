"""Array contents over the range a counter has swept since the loop's entry: `∀ k ∈ [i0, i): a[k] ⋈ e(k)`
(or `(i, i0]` for a counter that counts down), e(k) a constant or `k + d` read off the sampled states, ⋈ one
of `==`, `>=`, `<=`; i0 is the counter's entry copy (`Site.entry`).

Why: array initialisation, copy and search loops (SV-COMP's array categories) establish a fact about every
cell they have passed, which the loop after them reads; no scalar template states it, and havocking the
written array loses it. The quantified candidates are checked like all others (z3's quantifier instantiation).
"""
from __future__ import annotations

from looprover.domains.base import Domain, Site
from looprover.program.expr import ArrayType, Expr, ForAll, IntType, Select, Var, binary, cast, cmp, const

MAX_CELLS = 64      # sampled cells read per state


class Contents(Domain):
    name = "contents"

    def array_atoms(self, site: Site, a: Var, indices: list[Var]) -> list[Expr]:
        t = a.type
        if not isinstance(t, ArrayType) or not isinstance(t.elem, IntType) or not site.samples:
            return []
        out: list[Expr] = []
        for i in indices:
            i0 = site.entry.get(i.name)
            if i0 is None or not isinstance(i.type, IntType):
                continue
            for down in (False, True):
                cells = [(k, s[a.name].get(t.index.wrap(k))) for s in site.samples
                         for k in _swept(s[i0.name], s[i.name], down)[:MAX_CELLS]]
                if not cells:
                    continue
                k = Var("__lr_k_" + "".join(ch if ch.isalnum() else "_" for ch in a.name), i.type)
                lo, hi = (binary("+", i, const(1, i.type)), binary("+", i0, const(1, i.type))) if down else (i0, i)
                cell = Select(a, cast(t.index, k), t.elem)
                vals = [v for _, v in cells]
                bodies = [cmp(">=", cell, const(min(vals), t.elem)), cmp("<=", cell, const(max(vals), t.elem))]
                if min(vals) == max(vals):
                    bodies.insert(0, cmp("==", cell, const(vals[0], t.elem)))
                offs = {v - j for j, v in cells}
                if len(offs) == 1 and t.elem == i.type:
                    bodies.append(cmp("==", cell, binary("+", k, const(offs.pop(), i.type))))
                out += [ForAll(k, lo, hi, b) for b in bodies]
        return out


def _swept(start: int, now: int, down: bool) -> range:
    """The indices a counter swept from `start` to `now` (a lazy range: a sampled counter may be 10^9 away)."""
    return range(now + 1, start + 1) if down else range(start, now)
