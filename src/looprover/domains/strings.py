"""Strings and buffers: for a char array `a` and an integer variable `v`, zero termination at `v`
(`a[v] == 0`) and the index bounds `0 ≤ v`, `v < size(a)`, `v ≤ size(a)`; for an array of known size, a
terminator in its last cell (`a[size-1] == 0`) and `v < size(a) - 1`.

Why: the string loops of buffer code (Loopfrog's Verisec/Zitser suites) scan or write `a[p]` until a
terminating zero; that the zero at `n` survives the loop, and that `p` stays below `n` and the buffer's size,
is what their in-bounds assertions need. Bounds relative to `n` come from the zones domain; this one
supplies the array facts, which no scalar domain can state. The last-cell pair is the invariant of a scan
`do i++; while (a[i] != 0)` over a buffer whose program put the terminator at its end (`a[N] = 0` with
`char a[N+1]`): the scan stops at the end at the latest, so it never reads past it.
"""
from __future__ import annotations

from looprover.domains.base import Domain, Site
from looprover.program.expr import ArrayType, Expr, IntType, Select, Var, cast, cmp, const


class Strings(Domain):
    name = "strings"

    def array_atoms(self, site: Site, a: Var, indices: list[Var]) -> list[Expr]:
        t = a.type
        if not isinstance(t, ArrayType) or not isinstance(t.elem, IntType) or t.elem.bits != 8:
            return []
        out: list[Expr] = []
        last = t.size is not None and t.size > 1          # an array with a last cell besides the first
        if last:
            out.append(cmp("==", Select(a, const(t.size - 1, t.index), t.elem), const(0, t.elem)))
        for v in indices:
            if not isinstance(v.type, IntType):
                continue
            out.append(cmp("==", Select(a, cast(t.index, v), t.elem), const(0, t.elem)))
            if t.size is not None and v.type.contains(t.size):
                out += [cmp(">=", v, const(0, v.type)), cmp("<", v, const(t.size, v.type)),
                        cmp("<=", v, const(t.size, v.type))]
                if last:
                    out.append(cmp("<", v, const(t.size - 1, v.type)))
        return out
