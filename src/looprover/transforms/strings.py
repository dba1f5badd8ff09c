"""String terminators as ghost variables: per char array `a`, `a@len`, the index of its first zero cell at an
index >= 0, and `a@zero`, whether it has one. Every read of `a` assumes what they say of the cell read; every
write of `a` updates them.

Why: a fixed buffer program is safe because its scans stop at a terminator that lies inside the buffer --
`i <= strlen(s) < size(s)`. That fact is about the first zero cell, which no invariant over a bounded number of
cells states (the cell abstraction, `transforms/cells.py`, keeps one cell and loses it), so the engines proved
such programs only by unrolling the buffer (at BASE_SZ 2, not at 100). With the ghosts the fact is linear
(`i <= s@len`, `s@len < 100`) and the program's proof no longer depends on the size (issue 30, the string
domain of Loopfrog's buffer summaries).

The instrumented program, per tracked array `a` (integer cells of 8 bits: C strings), with `ok(e)` for
`0 <= e <= max` of the index type:
  * at the start, and after `havoc(a)` or an assignment of an array expression it does not follow:
    `havoc(a@len, a@zero); assume(a@len >= 0)`;
  * a read `a[e]` becomes a temporary `r := a[e]` with `assume(ok(e) ⇒ ((a@zero ∧ e == a@len ⇒ r == 0) ∧
    (¬a@zero ∨ e < a@len ⇒ r != 0)))` (on an edge that ends in a violation the read stays in place and the
    assumption is stated of it, so that `transforms/cells.py` still reads that cell exactly);
  * a write `a[e] = v` with `ok(e)`: `v == 0` before the first zero makes `e` the first zero; `v != 0` at the
    first zero moves it to a fresh index `> e` or to none (havocked); other writes keep the ghosts. A copy of a
    whole tracked array copies its ghosts; a constant array sets them, and so do constants stored at constant
    indices into it on the same edge (a string literal: `"EX"` has its zero at 2, where the general update
    would lose it after the first character).

Guarantee: **over-approximation** (in fact exact on the program's variables). Every assumption holds of the true
first zero, and every havoc of a ghost lets it take the true value, so each run of the program is the
projection of a run of the result in which the ghosts hold the truth; and every run of the result projects to
a run of the program, as the program's own statements are unchanged and only assumptions are added. A
counterexample is run on the program's inputs (the result adds no input); a proof is the result's, checked on
the instrumentation of the program again (`TransformedProof`).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from looprover.domains.strings import LENGTH_GHOST
from looprover.evidence.proofs import Proof, TransformedProof
from looprover.program.cfa import Assert, Assign, Assume, Edge, Havoc, Program, Stmt, VarInfo
from looprover.program.expr import (
    BINDERS, BOOL, FALSE, TRUE, ArrayType, ConstArray, Expr, IntConst, IntType, Ite, Select, Store, Var, and_, cast, cmp,
    const, implies, ite, not_, or_, rebuild,
)
from looprover.transforms.base import Guarantee, RunOnInputs, Transform, Transformed, declare_temp
from looprover.transforms.cells import violating_assumes


def tracked(v: Var) -> bool:
    """The arrays whose terminators are followed: C strings (8-bit integer cells)."""
    return isinstance(v.type, ArrayType) and isinstance(v.type.elem, IntType) and v.type.elem.bits == 8


def has_strings(program: Program) -> bool:
    return any(tracked(v) for v in program.all_vars)


class StringTerminators(Transform):
    name = "strings"
    summary = "string terminators as ghost variables"
    guarantee = Guarantee.OVER

    def apply(self, program: Program, settings: Any = None) -> Transformed:
        return _Instrument(program).result()


class _Instrument:
    def __init__(self, program: Program):
        self.program = program
        self.variables: dict[str, VarInfo] = dict(program.variables)
        self.ghosts: dict[str, tuple[Var, Var]] = {}        # array name -> (len, zero)
        for v in program.all_vars:
            if tracked(v):
                self.ghosts[v.name] = (self._declare(f"{v.name}{LENGTH_GHOST}", v.type.index),
                                       self._declare(f"{v.name}@zero", BOOL))
        self.fresh = 0

    def _declare(self, base: str, t) -> Var:
        return declare_temp(self.variables, base, t)

    def _temp(self, base: str, t) -> Var:
        self.fresh += 1
        return self._declare(f"__lr_{base}{self.fresh}", t)

    def result(self) -> Transformed:
        p = self.program
        if not self.ghosts:
            return Transformed(p, Guarantee.OVER, _Back(), notes=["no string arrays"])
        edges = [self._edge(e) for e in p.edges]
        start = p.num_locs
        entry = Edge(start, p.init, tuple(s for a in self.ghosts for s in self._unknown(a)))
        out = replace(p, variables=self.variables, edges=tuple([entry] + edges), init=start, num_locs=p.num_locs + 1)
        out.check()
        return Transformed(out, Guarantee.OVER, _Back(),
                           notes=[f"{len(self.ghosts)} string array(s) with terminator ghosts"])

    def _unknown(self, name: str) -> list[Stmt]:
        """The ghosts of `name` take any value the truth may have."""
        n, z = self.ghosts[name]
        return [Havoc((n, z)), Assume(cmp(">=", n, const(0, n.type)))]

    # ------------------------------------------------------------------------------------------ statements
    def _edge(self, e: Edge) -> Edge:
        stmts = list(e.stmts)
        if violating_assumes(stmts) is not None:
            conds = [c for st in stmts[:-1] for c in self._read_facts(st.cond)]
            return Edge(e.src, e.dst, tuple([Assume(c, stmts[-1].src) for c in conds] + stmts))
        out: list[Stmt] = []
        known: dict[str, tuple[int, dict[int, int]]] = {}
        for st in stmts:
            if isinstance(st, Assign):
                rhs = self._hoist(st.rhs, out, st.src)
                if st.lhs.name in self.ghosts and _constant_content(st.lhs, rhs, known):
                    out.append(Assign(st.lhs, rhs, st.src))
                    n, z = self.ghosts[st.lhs.name]
                    first = _first_zero(*known[st.lhs.name], n.type)
                    out += [Assign(n, const(first if first is not None else 0, n.type), st.src),
                            Assign(z, TRUE if first is not None else FALSE, st.src)]
                elif st.lhs.name in self.ghosts:
                    known.pop(st.lhs.name, None)
                    self._write(st.lhs.name, rhs, out, st)
                else:
                    out.append(Assign(st.lhs, rhs, st.src))
            elif isinstance(st, Havoc):
                out.append(st)
                for v in st.vars:
                    if v.name in self.ghosts:
                        known.pop(v.name, None)
                        out.extend(self._unknown(v.name))
            elif isinstance(st, Assume):
                out.append(Assume(self._hoist(st.cond, out, st.src), st.src))
            else:
                assert isinstance(st, Assert)
                out.extend(Assume(c, st.src) for c in self._read_facts(st.cond))
                out.append(st)
        return Edge(e.src, e.dst, tuple(out))

    def _write(self, name: str, rhs: Expr, out: list[Stmt], st: Assign) -> None:
        """`name := rhs` (reads already hoisted) and its ghosts' update, evaluated before the assignment."""
        n, z = self.ghosts[name]
        new = self._ghosts_of(rhs, out, st.src)
        if new is None or new == (n, z):
            out.append(Assign(st.lhs, rhs, st.src))
            if new is None:
                out.extend(self._unknown(name))
            return
        # the new values, computed before the assignment (they read the old ghosts and the pre-state)
        tn, tz = self._temp("slen", n.type), self._temp("szero", BOOL)
        out += [Assign(tn, new[0], st.src), Assign(tz, new[1], st.src), Assign(st.lhs, rhs, st.src),
                Assign(n, tn, st.src), Assign(z, tz, st.src)]

    def _ghosts_of(self, a: Expr, out: list[Stmt], src) -> tuple[Expr, Expr] | None:
        """(len, zero) of the array expression `a` as expressions over the pre-state, or None if not followed."""
        if isinstance(a, Var):
            return self.ghosts.get(a.name)
        if isinstance(a, ConstArray):
            if not isinstance(a.type.elem, IntType):
                return None
            return const(0, a.type.index), cmp("==", a.value, const(0, a.value.type))
        if isinstance(a, Ite):
            t, f = self._ghosts_of(a.then, out, src), self._ghosts_of(a.orelse, out, src)
            if t is None or f is None:
                return None
            return ite(a.cond, t[0], f[0]), ite(a.cond, t[1], f[1])
        if isinstance(a, Store):
            base = self._ghosts_of(a.array, out, src)
            if base is None:
                return None
            n, z = base
            e = cast(a.type.index, a.index)
            ok = _in_range(e)
            kill = and_(ok, cmp("==", a.value, const(0, a.value.type)), or_(not_(z), cmp("<", e, n)))
            grow = and_(ok, cmp("!=", a.value, const(0, a.value.type)), z, cmp("==", e, n))
            fn, fz = self._temp("snext", a.type.index), self._temp("snextz", BOOL)
            # the first zero after e, if there is one: any index > e
            out += [Havoc((fn, fz), src), Assume(cmp(">=", fn, const(0, fn.type)), src),
                    Assume(implies(fz, cmp(">", fn, e)), src)]
            return (ite(kill, e, ite(grow, fn, n)),
                    or_(kill, and_(not_(grow), z), and_(grow, fz)))
        return None

    # ------------------------------------------------------------------------------------------- reads
    def _hoist(self, e: Expr, out: list[Stmt], src) -> Expr:
        """`e` with every read of a tracked array in a temporary, assigned (with its facts) into `out` first."""
        if isinstance(e, BINDERS):
            return e
        kids = e.children()
        new = rebuild(e, tuple(self._hoist(k, out, src) for k in kids)) if kids else e
        if isinstance(new, Select) and isinstance(new.array, Var) and new.array.name in self.ghosts:
            r = self._temp("sread", new.type)
            out.append(Assign(r, new, src))
            out.append(Assume(self._facts(new.array.name, new.index, r), src))
            return r
        return new

    def _read_facts(self, e: Expr) -> list[Expr]:
        """What the ghosts say of each read of a tracked array in `e` (left in place)."""
        facts: list[Expr] = []
        stack = [e]
        while stack:
            n = stack.pop()
            if isinstance(n, BINDERS):
                continue
            if isinstance(n, Select) and isinstance(n.array, Var) and n.array.name in self.ghosts:
                facts.append(self._facts(n.array.name, n.index, n))
            stack.extend(n.children())
        return facts

    def _facts(self, name: str, index: Expr, value: Expr) -> Expr:
        """What the ghosts of array `name` say of `value`, read at `index`."""
        n, z = self.ghosts[name]
        e = cast(n.type, index)
        zero = const(0, value.type)
        at = implies(and_(z, cmp("==", e, n)), cmp("==", value, zero))
        before = implies(or_(not_(z), cmp("<", e, n)), cmp("!=", value, zero))
        return implies(_in_range(e), and_(at, before))


def _constant_content(a: Var, rhs: Expr, known: dict[str, tuple[int, dict[int, int]]]) -> bool:
    """Whether `a := rhs` leaves `a` with content known cell by cell -- a constant array, then stores of
    constants at constant indices on the same edge (how a string literal is initialised) -- updating `known`.
    The ghosts of such an array are exact where the general update would havoc the next zero."""
    stores: list[tuple[int, int]] = []
    while isinstance(rhs, Store) and isinstance(rhs.index, IntConst) and isinstance(rhs.value, IntConst):
        stores.append((rhs.index.type.wrap(rhs.index.value), rhs.value.type.wrap(rhs.value.value)))
        rhs = rhs.array
    if isinstance(rhs, ConstArray) and isinstance(rhs.value, IntConst):
        base: tuple[int, dict[int, int]] = (rhs.value.type.wrap(rhs.value.value), {})
    elif rhs == a and a.name in known:
        base = known[a.name]
    else:
        return False
    default, cells = base[0], dict(base[1])
    for i, v in reversed(stores):
        cells[i] = v
    known[a.name] = (default, cells)
    return True


def _first_zero(default: int, cells: dict[int, int], index: IntType) -> int | None:
    """The first index >= 0 of a zero cell in the array holding `cells` and `default` elsewhere."""
    zeros = [i for i, v in cells.items() if v == 0 and i >= 0]      # indices are wrapped to their type
    if default == 0:
        i = 0
        while i in cells and cells[i] != 0:
            i += 1
        zeros.append(i)
    return min(zeros) if zeros and index.contains(min(zeros)) else None


def _in_range(e: Expr) -> Expr:
    """`e` is a cell the ghosts speak of: `0 <= e <= max` of its index type. The upper bound matters in integer
    mode, where an index expression keeps its mathematical value: a read hoisted out of an untaken branch
    (`i < 127 ? a[i + 1] : 0` at i = 127) may be at max + 1, a cell of no C array, of which nothing is known."""
    t = e.type
    if not isinstance(t, IntType):
        return TRUE
    low = [cmp(">=", e, const(0, t))] if t.signed or not t.bounded else []
    high = [cmp("<=", e, const(t.max, t))] if t.bounded else []
    return and_(*low, *high)


class _Back(RunOnInputs):
    """Counterexamples: the program run on the result's inputs (it adds none). Proofs: the result's, checked
    on the instrumentation of the program again."""

    def invariant(self, evidence: Any) -> Any | None:
        return TransformedProof(StringTerminators.name, evidence) if isinstance(evidence, Proof) else None
