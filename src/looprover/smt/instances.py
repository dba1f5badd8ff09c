"""Quantifiers over array indices replaced by their instances at the query's index terms.

Why: Houdini reads models, and z3's model-based quantifier instantiation can spin without end on a satisfiable
query that assumes `∀k. lo ≤ k < hi ⇒ φ(a[k])` (measured: a round over 111 candidates of an array loop did
not finish in 20 s, while each of its candidates alone took 0.2 s). Our quantified invariants are in the array
property fragment (Bradley, Manna, Sipma, VMCAI 2006): the index variable occurs only as an array index and in
the guard's bounds. There, instantiating each universally quantified assumption at the index set -- every
index term of a read or a write, and the guards' bounds -- is complete: the quantified query is satisfiable
exactly when its instantiation is. For any other formula the instances are still implied by the quantifier,
so an unsat answer stays sound; only a sat one may be spurious (a Houdini round then drops a candidate it
could have kept).
"""
from __future__ import annotations

from typing import Iterable

import z3


def index_terms(formulas: Iterable[z3.ExprRef]) -> list[z3.ExprRef]:
    """The ground index terms of `formulas`: the index of every array read and write, and for each quantifier
    over an index, the bounds its guard compares the bound variable with (`lo ≤ k` gives lo, `k < hi` gives
    hi - 1, the largest index it covers)."""
    out: dict[int, z3.ExprRef] = {}
    seen: set[int] = set()
    stack = list(formulas)
    while stack:
        e = stack.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        if z3.is_quantifier(e):
            _guard_bounds(e, out)
            stack.append(e.body())
            continue
        if z3.is_app(e):
            k = e.decl().kind()
            if k in (z3.Z3_OP_SELECT, z3.Z3_OP_STORE) and e.num_args() >= 2:
                ix = e.arg(1)
                if _ground(ix):
                    out.setdefault(ix.get_id(), ix)
            stack.extend(e.children())
    return list(out.values())


def instantiate(f: z3.BoolRef, terms: list[z3.ExprRef]) -> z3.BoolRef:
    """`f` with each universal quantifier of one bound variable that it asserts (under And, Or, Implies'
    conclusion) replaced by the conjunction of its instances at the `terms` of the bound variable's sort."""
    if z3.is_quantifier(f):
        if not f.is_forall() or f.num_vars() != 1:
            return f
        body = f.body()
        return z3.And([z3.substitute_vars(body, t) for t in terms if t.sort() == f.var_sort(0)] or [z3.BoolVal(True)])
    if z3.is_and(f) or z3.is_or(f):
        kids = [instantiate(c, terms) for c in f.children()]
        return z3.And(kids) if z3.is_and(f) else z3.Or(kids)
    if z3.is_app_of(f, z3.Z3_OP_IMPLIES):
        return z3.Implies(f.arg(0), instantiate(f.arg(1), terms))
    return f


def at_cell(f: z3.BoolRef, cell: z3.ExprRef) -> z3.BoolRef:
    """`f` with each universal quantifier of one bound variable of `cell`'s sort that it asserts (under And,
    Implies' conclusion, and an Or with one quantified child) replaced by its body at `cell`. For a `cell` that
    occurs nowhere else, `¬at_cell(f, cell)` is satisfiable exactly when `¬f` is: a failing quantifier fails at
    some cell, and one cell serves a conjunction because its negation is a disjunction. (Under an Or of several
    quantified children the negation would need a cell each: those quantifiers stay.) A check of `f` as a
    consequence is then quantifier-free on that side, and `cell` is an index term for the other side's
    instances."""
    if z3.is_quantifier(f):
        if f.is_forall() and f.num_vars() == 1 and f.var_sort(0) == cell.sort():
            return z3.substitute_vars(f.body(), cell)
        return f
    if z3.is_and(f):
        return z3.And([at_cell(c, cell) for c in f.children()])
    if z3.is_or(f) and sum(_has_quantifier(c) for c in f.children()) == 1:
        return z3.Or([at_cell(c, cell) for c in f.children()])
    if z3.is_app_of(f, z3.Z3_OP_IMPLIES):
        return z3.Implies(f.arg(0), at_cell(f.arg(1), cell))
    return f


def _ground(e: z3.ExprRef) -> bool:
    """No bound variable in `e` (an index term outside a quantifier's body, or a bound its body compares with)."""
    return not z3.is_var(e) and not z3.is_quantifier(e) and all(_ground(c) for c in e.children())


def _guard_bounds(q: z3.QuantifierRef, out: dict[int, z3.ExprRef]) -> None:
    sort = q.var_sort(0) if q.num_vars() == 1 else None
    if sort is None or not (sort == z3.IntSort(q.ctx) or z3.is_bv_sort(sort)):
        return
    stack = [q.body()]
    while stack:
        e = stack.pop()
        if not z3.is_app(e):
            continue
        k = e.decl().kind() if e.num_args() == 2 else None
        if k in (z3.Z3_OP_LE, z3.Z3_OP_LT, z3.Z3_OP_GE, z3.Z3_OP_GT, z3.Z3_OP_SLEQ, z3.Z3_OP_SLT, z3.Z3_OP_SGEQ,
                 z3.Z3_OP_SGT):
            a, b = e.arg(0), e.arg(1)
            for v, t, upper in ((a, b, k in (z3.Z3_OP_LT, z3.Z3_OP_LE, z3.Z3_OP_SLT, z3.Z3_OP_SLEQ)),
                                (b, a, k in (z3.Z3_OP_GT, z3.Z3_OP_GE, z3.Z3_OP_SGT, z3.Z3_OP_SGEQ))):
                if z3.is_var(v) and z3.get_var_index(v) == 0 and _ground(t):
                    strict = k in (z3.Z3_OP_LT, z3.Z3_OP_GT, z3.Z3_OP_SLT, z3.Z3_OP_SGT)
                    bound = t - 1 if (upper and strict) else t + 1 if (not upper and strict) else t
                    bound = z3.simplify(bound)
                    out.setdefault(bound.get_id(), bound)
        stack.extend(e.children())


class GrowingInstances:
    """Instances for a query that grows, as k-induction's step case does by one state per k: `assume` takes
    formulas to assert and returns them with their quantifiers instantiated at every index term seen so far;
    `ground` takes the query's other parts and returns the instances of every formula assumed so far at their
    new index terms. The caller adds what both return, and the other parts as it would anyway."""

    def __init__(self) -> None:
        self.formulas: list[z3.BoolRef] = []
        self.terms: dict[int, z3.ExprRef] = {}

    def assume(self, fs: list[z3.BoolRef]) -> list[z3.BoolRef]:
        quantified = [f for f in fs if _has_quantifier(f)]
        if not quantified and not self.formulas:
            return list(fs)
        out = self._new_terms(fs)
        self.formulas += quantified
        terms = list(self.terms.values())
        return out + [instantiate(f, terms) for f in fs]

    def ground(self, fs: list[z3.BoolRef]) -> list[z3.BoolRef]:
        """(Without a quantified formula assumed yet, the terms are not collected: a query without quantifiers
        pays nothing, and a formula assumed later gets the terms seen from then on.)"""
        return self._new_terms(fs) if self.formulas else []

    def _new_terms(self, fs: list[z3.BoolRef]) -> list[z3.BoolRef]:
        new = [t for t in index_terms(fs) if t.get_id() not in self.terms]
        for t in new:
            self.terms[t.get_id()] = t
        return [instantiate(f, new) for f in self.formulas] if new else []


def _has_quantifier(f: z3.ExprRef) -> bool:
    return z3.is_quantifier(f) or any(_has_quantifier(c) for c in f.children())
