"""Strings and buffers: for a char array `a` and an integer variable `v`, zero termination at `v`
(`a[v] == 0`) and the index bounds `0 ≤ v`, `v < size(a)`, `v ≤ size(a)`; for an array of known size, a
terminator in its last cell (`a[size-1] == 0`), `v < size(a) - 1`, and for a cell the program reads at `x + y`
(a pointer's offset plus a counter: `strlen(s)` with `s` pointing into a), `x + y <= size(a) - 1`; for one of
unknown size (a heap or
`alloca` buffer of n cells), a terminator in the last cell of a buffer of v cells (`a[v-1] == 0`).

Why: the string loops of buffer code (Loopfrog's Verisec/Zitser suites) scan or write `a[p]` until a
terminating zero; that the zero at `n` survives the loop, and that `p` stays below `n` and the buffer's size,
is what their in-bounds assertions need. Bounds relative to `n` come from the zones domain; this one
supplies the array facts, which no scalar domain can state. The last-cell pair is the invariant of a scan
`do i++; while (a[i] != 0)` over a buffer whose program put the terminator at its end (`a[N] = 0` with
`char a[N+1]`): the scan stops at the end at the latest, so it never reads past it. A buffer of unknown size
is allocated with n cells and terminated at `a[n-1]` (SV-COMP's MemSafety string tasks); a fill loop before
the scan keeps `a[n-1] == 0`, which no candidate over the loop's own counters states. The sum form is the scan's
bound when it starts inside the buffer (`strlen(msg + 2)` over `msg[N]` with `msg[N-1] = 0`: Verisec's bind
rrextract at BASE_SZ 1000, whose loop summary needs it), which no interval on the counter alone states without
the offset; only the sums the program indexes with are offered (`index_sums`), not every pair of variables.
"""
from __future__ import annotations

from looprover.domains.base import Domain, Site
from looprover.domains.cells import strip_casts
from looprover.program.cfa import Program
from looprover.program.expr import ArrayType, Binary, Expr, IntType, Select, Store, Var, cast, cmp, const, or_, walk

LENGTH_GHOST = "@len"       # the suffix of a char array's terminator ghost (`transforms/strings.py`)
MAX_BOUNDS = 3              # constants tried per bounded form, the smallest the samples allow


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
        names = {v.name for v in indices}
        for x, y in site.index_sums.get(a.name, ()) if last else ():
            if x.name in names and y.name in names:
                out.append(cmp("<=", Binary("+", x, y, x.type), const(t.size - 1, x.type)))
        for v in indices:
            if not isinstance(v.type, IntType):
                continue
            out.append(cmp("==", Select(a, cast(t.index, v), t.elem), const(0, t.elem)))
            if t.size is None:      # a buffer of v cells whose program put the terminator in its last one
                last_cell = cast(t.index, Binary("-", v, const(1, v.type), v.type))
                out.append(cmp("==", Select(a, last_cell, t.elem), const(0, t.elem)))
            if t.size is not None and v.type.contains(t.size):
                out += [cmp(">=", v, const(0, v.type)), cmp("<", v, const(t.size, v.type)),
                        cmp("<=", v, const(t.size, v.type))]
                if last:
                    out.append(cmp("<", v, const(t.size - 1, v.type)))
        return out


def index_sums(program: Program) -> dict[str, tuple[tuple[Var, Var], ...]]:
    """Per char array of known size, the pairs (x, y) of integer variables of one type that the program reads or
    writes it at, as `a[x + y]` (casts aside): the sums `Strings` bounds by the array's last cell."""
    found: dict[str, dict[tuple[Var, Var], None]] = {}
    for _, st in program.statements():
        for e in (getattr(st, "rhs", None), getattr(st, "cond", None)):
            for m in walk(e) if e is not None else ():
                if not isinstance(m, (Select, Store)) or not isinstance(m.array, Var):
                    continue
                t = m.array.type
                if not (isinstance(t, ArrayType) and t.size is not None and isinstance(t.elem, IntType)
                        and t.elem.bits == 8):
                    continue
                ix = strip_casts(m.index)
                if isinstance(ix, Binary) and ix.op == "+":
                    x, y = strip_casts(ix.lhs), strip_casts(ix.rhs)
                    if isinstance(x, Var) and isinstance(y, Var) and x.type == y.type \
                            and isinstance(x.type, IntType):
                        found.setdefault(m.array.name, {})[(x, y)] = None
    return {a: tuple(pairs) for a, pairs in found.items()}


def is_length_ghost(name: str) -> bool:
    return name.split("#")[0].endswith(LENGTH_GHOST)


class StringLengths(Domain):
    """On the string-terminator abstraction (`transforms/strings.py`): relations of a ghost length g = `a@len`
    (the index of a's first zero) with the loop's counters x, y, which state where a scan or a copy stands:
      * `g <= b`, b a program constant or one less (the terminator a program put in a buffer's last cell);
      * `c == 0 || x < g` for a char c the loop reads: a scan that has not met the terminator is before it;
      * `x + y <= g`: a scan from an offset y (`strlen(s + y)`, x counting) stays at or before the terminator;
      * `x - y + g <= K`, K a constant a guard compared with: a copy that writes at x while it reads at y has
        written at most K cells once it reaches the terminator, when the length left (`g - y`) was checked
        against K before the loop (`if (strlen(s) > K) return; while (s[i]) d[j++] = s[i++];`).
    Why: the cell abstraction keeps one cell of each array, so these relations are what is left of a string
    loop's proof; none of the other domains states three variables, and Spacer finds them slowly or not at all
    (issue 30: a copy loop behind a length check at BASE_SZ 1000 took it 4-30+ s depending on its seed).
    Only live variables that the loop writes are related (x, and y except in the offset form), so the forms stay
    few: the candidates are what Houdini decides (`spacer.houdini`, and k-induction or a certificate on the
    abstraction)."""
    name = "string-lengths"
    max_atoms = 120

    def wants_scope(self, program: Program) -> bool:
        return any(is_length_ghost(n) for n in program.variables)

    def site_atoms(self, site: Site, ints: list[Var]) -> list[Expr]:
        if site.live is None or site.loop_writes is None:
            return []
        live = [v for v in ints if v.name in site.live]
        out: list[Expr] = []
        checked = sorted({k for bounds in site.guard_bounds.values() for _, k in bounds if k > 0})
        for g in (v for v in live if is_length_ghost(v.name)):
            t = g.type
            ctrs = [v for v in live if v.type == t and v.name in site.loop_writes and not is_length_ghost(v.name)]
            others = [v for v in live if v.type == t and v != g and not is_length_ghost(v.name)]
            chars = [v for v in live if isinstance(v.type, IntType) and v.type.bits == 8
                     and v.name in site.loop_writes]
            out += [cmp("<=", g, const(b, t)) for b in self._bounds(site, [g], [1], sorted(
                {b for k in site.consts for b in (k - 1, k) if b > 0 and t.contains(b)}), None)]
            out += [or_(cmp("==", ch, const(0, ch.type)), cmp("<", x, g)) for ch in chars for x in ctrs]
            out += [cmp("<=", Binary("+", x, y, t), g) for x in ctrs for y in others if y != x]
            limits = [k for k in checked if t.contains(k)]
            for x in ctrs:
                for y in ctrs:
                    if y != x:
                        form = Binary("+", Binary("-", x, y, t), g, t)
                        out += [cmp("<=", form, const(k, t)) for k in self._bounds(site, [x, y, g], [1, -1, 1], limits)]
        return out

    @staticmethod
    def _bounds(site: Site, vs: list[Var], coeffs: list[int], ks: list[int], most: int | None = MAX_BOUNDS
                ) -> list[int]:
        """The `most` smallest of `ks` (all: None) at or above the sampled maximum of sum(coeffs·vs)."""
        top = max((sum(c * s[v.name] for c, v in zip(coeffs, vs)) for s in site.samples
                   if all(isinstance(s.get(v.name), int) for v in vs)), default=None)
        return [k for k in ks if top is None or k >= top][:most]
