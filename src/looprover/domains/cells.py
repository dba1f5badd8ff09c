"""Quantified array invariants at a cutpoint: `∀k ∈ [0, hi): φ(k)`, for k-induction's Houdini.

Why: a loop that initialises, copies or filters an array establishes a fact about every cell below its counter,
and the loop after it reads those cells; the safety argument is the quantified invariant, which no scalar
template states (SV-COMP's array categories, `array-cav19`). Unlike `contents` (loop summaries, ranges from a
counter's entry copy), these candidates live in the program's own variables, so they hold at a cutpoint of
the cutpoint graph and k-induction, its certificate and the portfolio's recheck all read them alike.

The templates come from the program and from its sampled runs (`cell_shapes`, once per program):
- range ends `hi`: each index expression (`i`, `2*i`: the cells a loop has passed) and each bound a guard puts
  on an index variable (`i < N` gives N, `i <= 2*N` gives 2*N + 1: the cells a loop will pass);
- cell facts φ over a placeholder cell `k`: the comparisons of assertions and assumptions that read cells at
  one index variable, with k for it (`a[i] >= 0` gives `a[k] >= 0`); each array write at an index variable
  (`c[i] = a[i] + b[i]` gives `c[k] == a[k] + b[k]`); and what every sampled state shows over a range:
  bounds of a cell, its order against each integer variable, and the difference or sum of two arrays' cells.
Facts mined from the samples of one cutpoint are offered at every cutpoint: a loop behind a hundred thousand
iterations has no samples of its own, and the facts of the loop before it are what it needs.
Two arrays of one type may also be equal everywhere (`a == b`, no quantifier): what relational Horn systems
(two versions of a function run side by side, CHC-COMP's llreve tasks) need of their array arguments.
"""
from __future__ import annotations

from dataclasses import dataclass

from looprover.domains.base import Domain, Site
from looprover.program.cfa import Assert, Assign, Assume, Program
from looprover.program.expr import (
    ArrayType, Binary, Cast, Compare, Expr, ForAll, IntType, Select, Store, Var, binary, cast, cmp, const, free_vars,
    transform, walk,
)
from looprover.program.interp import Evaluator, UndefinedBehavior, cell_points

CELL = Var("__lr_cell", IntType(64, True))   # the placeholder cell index of the templates
MAX_SAMPLES = 40        # sampled states per cutpoint that facts are mined from
MAX_POINTS = 64         # cells per sampled state and range
MAX_BOUND = 1 << 16     # mined cell bounds beyond this are dropped
_NEGATE = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}
_MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


@dataclass(frozen=True)
class CellShapes:
    """The program's index ranges [lo, hi), cell facts (over `CELL`), and equalities of whole arrays."""
    ranges: tuple[tuple[Expr, Expr], ...]
    facts: tuple[Expr, ...]
    equal: tuple[Expr, ...] = ()


def strip_casts(ix: Expr) -> Expr:
    """`ix` without its integer casts (`a[(int)i]` is read at the index `i`)."""
    while isinstance(ix, Cast) and isinstance(ix.type, IntType):
        ix = ix.arg
    return ix


def _int_arrays(program: Program) -> list[Var]:
    return [i.var for i in program.variables.values()
            if isinstance(i.var.type, ArrayType) and isinstance(i.var.type.elem, IntType)]


def _scalar(e: Expr) -> bool:
    """An integer expression over integer variables only (no cells, no quantifier)."""
    return isinstance(e.type, IntType) and all(
        not isinstance(n, (Select, Store, ForAll)) and (not isinstance(n, Var) or isinstance(n.type, IntType))
        for n in walk(e))


def _at_cell(e: Expr) -> Expr | None:
    """`e` with every cell read `a[ix]` (one index expression ix throughout) read at `CELL`; None when e reads
    no cell, cells at different indices, or a variable of ix outside a cell index."""
    index: set[Expr] = set()

    def at(n: Expr) -> Expr | None:
        if isinstance(n, Select) and isinstance(n.array, Var) and _scalar(strip_casts(n.index)):
            index.add(strip_casts(n.index))
            return Select(n.array, cast(n.array.type.index, CELL), n.type)
        return None
    out = transform(e, at)
    if len(index) != 1 or free_vars(index.pop()) & free_vars(out) or any(isinstance(n, (Store, ForAll))
                                                                          for n in walk(out)):
        return None
    return out


def _syntactic_facts(program: Program) -> list[Expr]:
    facts: list[Expr] = []
    for _, st in program.statements():
        if isinstance(st, (Assert, Assume)):
            for n in walk(st.cond):
                if isinstance(n, Compare):
                    for c in (n, Compare(_NEGATE[n.op], n.lhs, n.rhs)):
                        f = _at_cell(c)
                        if f is not None:
                            facts.append(f)
        elif isinstance(st, Assign) and isinstance(st.rhs, Store) and st.rhs.array == st.lhs:
            w = st.rhs
            if isinstance(w.type.elem, IntType) and _scalar(strip_casts(w.index)):
                f = _at_cell(cmp("==", Select(st.lhs, w.index, w.type.elem), w.value))
                if f is not None:
                    facts.append(f)
    return facts


def _ranges(program: Program) -> list[tuple[Expr, Expr]]:
    """[lo, hi) ranges: lo 0 or one past an index expression (the cells a loop counting down has passed), hi an
    index expression or a guard's bound on an index variable."""
    ixs: list[Expr] = []
    idx_vars: set[Var] = set()
    for _, st in program.statements():
        for e in (getattr(st, "rhs", None), getattr(st, "cond", None)):
            for n in walk(e) if e is not None else ():
                if isinstance(n, (Select, Store)) and isinstance(n.array.type, ArrayType):
                    ix = strip_casts(n.index)
                    if _scalar(ix) and free_vars(ix):
                        ixs.append(ix)
                        idx_vars |= free_vars(ix)
    ends = list(ixs)
    for _, st in program.statements():
        cond = getattr(st, "cond", None)
        if cond is None or isinstance(st, Assert):
            continue
        for n in walk(cond):
            if not isinstance(n, Compare) or n.op not in _MIRROR:
                continue
            for v, bound, op in ((n.lhs, n.rhs, n.op), (n.rhs, n.lhs, _MIRROR[n.op])):
                if strip_casts(v) in idx_vars and _scalar(bound):
                    if op == "<":
                        ends.append(bound)
                    elif op == "<=":
                        ends.append(binary("+", bound, const(1, bound.type)))
    ends = [e for e in dict.fromkeys(ends) if e.type.signed]
    starts = [binary("+", e, const(1, e.type)) for e in dict.fromkeys(ixs) if isinstance(e, Binary)]
    return ([(const(0, hi.type), hi) for hi in ends] +
            [(lo, hi) for lo in starts for hi in ends if hi.type == lo.type and hi not in ixs])


def _mined_facts(program: Program, samples: dict[int, list[dict]], ranges: list[tuple[Expr, Expr]]) -> list[Expr]:
    """Facts that every sampled state of one cutpoint satisfies over one range [lo, hi)."""
    ev = Evaluator("math")
    arrays = _int_arrays(program)
    ints = [i.var for i in program.variables.values() if isinstance(i.var.type, IntType)]
    out: list[Expr] = []
    for states in samples.values():
        states = [s for s in states if all(a.name in s for a in arrays)][:MAX_SAMPLES]
        if not states:
            continue
        for lo_e, hi_e in ranges:
            seen: list[tuple[dict, dict[str, list[int]]]] = []   # per state: array -> values at the points
            try:
                for s in states:
                    lo, hi = ev.eval(lo_e, s), ev.eval(hi_e, s)
                    pts = cell_points([s[a.name] for a in arrays], lo, hi)[:MAX_POINTS]
                    if pts:
                        seen.append((s, {a.name: [s[a.name].get(k) for k in pts] for a in arrays}))
            except (UndefinedBehavior, KeyError, TypeError):
                continue
            if seen:
                out += _facts_seen(seen, arrays, ints)
    return out


def _facts_seen(seen: list[tuple[dict, dict[str, list[int]]]], arrays: list[Var], ints: list[Var]) -> list[Expr]:
    out: list[Expr] = []
    cell = {a.name: Select(a, cast(a.type.index, CELL), a.type.elem) for a in arrays}
    for a in arrays:
        vals = [v for _, c in seen for v in c[a.name]]
        t = a.type.elem
        if min(vals) == max(vals):
            out.append(cmp("==", cell[a.name], const(vals[0], t)))
        # a bound far out is a random input's, not the program's (and the type's range is no news)
        out += [cmp(op, cell[a.name], const(v, t)) for op, v in ((">=", min(vals)), ("<=", max(vals)))
                if abs(v) <= MAX_BOUND]
        for v in ints:
            if v.type != t:
                continue
            for op, holds in ((">=", lambda x, y: x >= y), ("<=", lambda x, y: x <= y)):
                if all(holds(x, s[v.name]) for s, c in seen for x in c[a.name]):
                    out.append(cmp(op, cell[a.name], v))
    for i, a in enumerate(arrays):
        for b in arrays[i + 1:]:
            if a.type.elem != b.type.elem:
                continue
            t = a.type.elem
            diffs = [x - y for _, c in seen for x, y in zip(c[a.name], c[b.name])]
            sums = [x + y for _, c in seen for x, y in zip(c[a.name], c[b.name])]
            ca, cb = cell[a.name], cell[b.name]
            if min(diffs) == max(diffs):
                out.append(cmp("==", ca, binary("+", cb, const(diffs[0], t))) if diffs[0] else cmp("==", ca, cb))
            elif min(diffs) > 0 or max(diffs) < 0:
                out.append(cmp(">" if min(diffs) > 0 else "<", ca, cb))
            elif min(diffs) >= 0 or max(diffs) <= 0:
                out.append(cmp(">=" if min(diffs) >= 0 else "<=", ca, cb))
            if min(sums) == max(sums):
                out.append(cmp("==", binary("+", ca, cb), const(sums[0], t)))
    return out


def cell_shapes(program: Program, samples: dict[int, list[dict]]) -> CellShapes:
    """The ranges and cell facts of `program`, the mined ones from `samples` (states with arrays)."""
    if not _int_arrays(program):
        return CellShapes((), ())
    ranges = _ranges(program)
    facts = _syntactic_facts(program) + _mined_facts(program, samples, ranges)
    arrays = _int_arrays(program)
    equal = [cmp("==", a, b) for i, a in enumerate(arrays) for b in arrays[i + 1:] if a.type == b.type]
    return CellShapes(tuple(ranges), tuple(dict.fromkeys(facts)), tuple(equal))


class Cells(Domain):
    """Fact by fact (the program's own first), each over every range; at most `max_atoms` per cutpoint: a
    Horn-clause system with a dozen array arguments has thousands of combinations, and Houdini over them gave
    up where it had finished over the quantifier-free candidates alone."""
    name = "cells"
    max_atoms = 96

    def site_atoms(self, site: Site, ints: list[Var]) -> list[Expr]:
        shapes = site.cells
        if shapes is None:
            return []
        cells = [Var(CELL.name, hi.type) for _, hi in shapes.ranges]

        def at(k: Var):
            return lambda n: (Select(n.array, cast(n.array.type.index, k), n.type)
                              if isinstance(n, Select) and strip_casts(n.index) == CELL else None)
        return list(shapes.equal) + [ForAll(k, lo, hi, transform(f, at(k))) for f in shapes.facts
                                     for (lo, hi), k in zip(shapes.ranges, cells)]
