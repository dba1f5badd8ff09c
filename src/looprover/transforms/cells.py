"""Cell abstraction: every array replaced by the one cell at a symbolic index, chosen at the start and never
changed -- a program without array variables, for the engines that have none (tpa, multiloop).

The abstract program keeps, per index type, an index `idx` (havocked once, at a new initial location) and, per
array `a`, the value `a@cell` of `a[idx]`:
  * a write `a[e] = v` becomes `a@cell = (e == idx) ? v : a@cell` (a whole-array assignment copies the cell);
  * a read `a[e]` becomes `(e == idx) ? a@cell : n`, n a fresh value havocked just before the statement;
    an equality of whole arrays `a == b` becomes `a@cell == b@cell && f`, f a fresh Boolean (Horn clauses),
    except that the one `a != b` of a violating edge is `a@cell != b@cell` (the arrays differ at idx);
  * an edge that ends in a violation (`Assume`s, then `assert(false)`: how `if (!cond) reach_error();`
    arrives) and reads cells at one index expression e only is taken only when `e == idx`, with every read
    exact (`a@cell`); an assertion `assert(c)` that reads cells at one index e becomes `e == idx ⇒ c`.

Why it over-approximates (VapHor, Monniaux & Gonnord, SAS 2016; VeriAbs's array abstraction): take any run of
the program that ends in a violation, at a cell j of the index expression of the violating edge. The abstract
run with `idx = j` follows it step by step -- reads at j are exact, every other read may return what the
program read -- and takes the violating edge, as `e == j == idx` there. So a TRUE of the abstract program is a
TRUE of the program. A counterexample of the abstract program is only a candidate: the program itself is run
on its inputs (`RunOnInputs`).

Its evidence: the abstract program's proof, checked by applying this transform again (`TransformedProof`).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from looprover.errors import UnsupportedError
from looprover.evidence.proofs import Proof, TransformedProof
from looprover.program.cfa import Assert, Assign, Assume, Edge, Havoc, Program, Stmt, VarInfo
from looprover.program.expr import (
    BINDERS, BOOL, FALSE, ArrayType, Compare, ConstArray, Expr, IntType, Ite, Select, Store, Var, and_, cast, cmp,
    Not, conjuncts, implies, ite, not_, rebuild, walk,
)
from looprover.transforms.base import Guarantee, RunOnInputs, Transform, Transformed, declare_temp


def has_arrays(program: Program) -> bool:
    return any(isinstance(v.type, ArrayType) for v in program.all_vars)


class CellAbstraction(Transform):
    name = "cells"
    summary = "cell abstraction (each array as its cell at one symbolic index)"
    guarantee = Guarantee.OVER

    def apply(self, program: Program, settings: Any = None) -> Transformed:
        return _Abstraction(program).result()


class _Abstraction:
    def __init__(self, program: Program):
        self.program = program
        self.variables: dict[str, VarInfo] = dict(program.variables)
        self.idx: dict[IntType, Var] = {}
        self.cell: dict[str, Var] = {}
        for v in program.all_vars:
            if isinstance(v.type, ArrayType):
                if v.type.index not in self.idx:
                    self.idx[v.type.index] = self._declare(f"__lr_idx_{v.type.index}", v.type.index)
                self.cell[v.name] = self._declare(f"{v.name}@cell", v.type.elem)
                del self.variables[v.name]
        self.fresh = 0
        self.differ: Expr | None = None      # the current edge's array difference (`_violation_difference`)

    def _declare(self, base: str, t) -> Var:
        return declare_temp(self.variables, base, t)

    def result(self) -> Transformed:
        p = self.program
        edges = [self._edge(e) for e in p.edges]
        start = p.num_locs
        entry = Edge(start, p.init, (Havoc(tuple(self.idx.values()) + tuple(self.cell.values())),))
        out = replace(p, variables=self.variables, edges=tuple([entry] + edges), init=start, num_locs=p.num_locs + 1)
        out.check()
        notes = [f"{len(self.cell)} array(s) abstracted to their cell at a symbolic index"]
        return Transformed(out, Guarantee.OVER, _Back(), notes=notes)

    # ------------------------------------------------------------------------------------------ statements
    def _edge(self, e: Edge) -> Edge:
        stmts = list(e.stmts)
        exact = self._violation_index(stmts)
        self.differ = self._violation_difference(stmts) if exact is None else None
        out: list[Stmt] = []
        if exact is not None:
            out.append(Assume(self._at(exact)))
        for st in stmts:
            havocs: list[Var] = []
            if isinstance(st, Assign):
                if isinstance(st.lhs.type, ArrayType):
                    new: Stmt = Assign(self.cell[st.lhs.name], self._cell_of(st.rhs, havocs, exact), st.src)
                else:
                    new = Assign(st.lhs, self._expr(st.rhs, havocs, exact), st.src)
            elif isinstance(st, Havoc):
                new = Havoc(tuple(self.cell.get(v.name, v) for v in st.vars), st.src)
            elif isinstance(st, Assume):
                new = Assume(self._expr(st.cond, havocs, exact), st.src)
            else:
                assert isinstance(st, Assert)
                ix = self._single_index(st.cond) if exact is None else None
                cond = self._expr(st.cond, havocs, exact if exact is not None else ix)
                new = Assert(implies(self._at(ix), cond) if ix is not None else cond, st.prop, st.src)
            if havocs:
                out.append(Havoc(tuple(havocs), st.src))
            out.append(new)
        return Edge(e.src, e.dst, tuple(out))

    def _violation_index(self, stmts: list[Stmt]) -> Expr | None:
        """The one index expression at which the `Assume`s of a violating edge read cells, if they read any and
        only there (see the module docstring)."""
        conds = violating_assumes(stmts)
        return self._single_index(and_(*conds)) if conds else None

    def _violation_difference(self, stmts: list[Stmt]) -> Expr | None:
        """The one `a != b` of whole arrays that a violating edge asserts (as a conjunct of its `Assume`s, no cell
        read beside it): the cell abstraction takes it as `a@cell != b@cell`, exact when idx is a cell where the
        arrays differ -- the abstract run that picks such an idx follows the violating run (as for a read)."""
        conds = [c for cond in violating_assumes(stmts) or () for c in conjuncts(cond)]
        if any(isinstance(n, (Select, Store)) for c in conds for n in walk(c)):
            return None
        found = [c for c in conds if _array_difference(c) is not None]
        arrays = [n for c in conds for n in walk(c) if isinstance(n, Compare) and isinstance(n.lhs.type, ArrayType)]
        return found[0] if len(found) == 1 and len(arrays) == 1 else None

    @staticmethod
    def _single_index(cond: Expr) -> tuple[Expr, IntType] | None:
        """(the index expression, its arrays' index type) when `cond` reads cells of array variables at one
        index expression of one index type only."""
        reads = [n for n in walk(cond) if isinstance(n, (Select, Store))]
        if not reads or not all(isinstance(n, Select) and isinstance(n.array, Var) for n in reads):
            return None
        indices = {(n.index, n.array.type.index) for n in reads}
        return indices.pop() if len(indices) == 1 else None

    def _at(self, ix: tuple[Expr, IntType]) -> Expr:
        """`ix == idx` for the symbolic index of ix's index type."""
        e, t = ix
        return cmp("==", cast(t, e), self.idx[t])

    # ----------------------------------------------------------------------------------------- expressions
    def _expr(self, e: Expr, havocs: list[Var], exact: Expr | None) -> Expr:
        """A scalar expression with every cell read abstracted; reads at `exact` read the cell itself."""
        if e == self.differ:
            a, b = _array_difference(e)
            return cmp("!=", self._cell_of(a, havocs, exact), self._cell_of(b, havocs, exact))
        if isinstance(e, Compare) and isinstance(e.lhs.type, ArrayType) and e.op in ("==", "!="):
            # a == b holds only where the cells agree, and then it may or may not: `cells equal ∧ fresh`
            b = self._declare(f"__lr_equal{self.fresh}", BOOL)
            self.fresh += 1
            havocs.append(b)
            same = and_(cmp("==", self._cell_of(e.lhs, havocs, exact), self._cell_of(e.rhs, havocs, exact)), b)
            return same if e.op == "==" else not_(same)
        if isinstance(e, BINDERS) or isinstance(e.type, ArrayType):
            raise UnsupportedError(f"the cell abstraction does not take the expression {e}")
        if isinstance(e, Select):
            cell = self._cell_of(e.array, havocs, exact)
            t = e.array.type.index
            if exact is not None and (e.index, t) == exact and isinstance(e.array, Var):
                return cell
            n = self._declare(f"__lr_read{self.fresh}", e.type)
            self.fresh += 1
            havocs.append(n)
            return ite(self._at((self._expr(e.index, havocs, exact), t)), cell, n)
        kids = e.children()
        return rebuild(e, tuple(self._expr(k, havocs, exact) for k in kids)) if kids else e

    def _cell_of(self, a: Expr, havocs: list[Var], exact: Expr | None) -> Expr:
        """The value at `idx` of the array expression `a`."""
        if isinstance(a, Var):
            return self.cell[a.name]
        if isinstance(a, Store):
            ix = (self._expr(a.index, havocs, exact), a.type.index)
            # the value counts only where the index is idx: a read at the same index is the cell itself there
            value = self._expr(a.value, havocs, (a.index, a.type.index))
            return ite(self._at(ix), value, self._cell_of(a.array, havocs, exact))
        if isinstance(a, ConstArray):
            return self._expr(a.value, havocs, exact)
        if isinstance(a, Ite):
            return ite(self._expr(a.cond, havocs, exact), self._cell_of(a.then, havocs, exact),
                       self._cell_of(a.orelse, havocs, exact))
        raise UnsupportedError(f"the cell abstraction does not take the array expression {a}")


def violating_assumes(stmts: list[Stmt]) -> list[Expr] | None:
    """The conditions of a violating edge: `Assume`s only, then `assert(false)` (how `if (!c) reach_error();`
    arrives); None for any other edge."""
    if not stmts or not (isinstance(stmts[-1], Assert) and stmts[-1].cond == FALSE):
        return None
    if not all(isinstance(s, Assume) for s in stmts[:-1]):
        return None
    return [s.cond for s in stmts[:-1]]


def _array_difference(c: Expr) -> tuple[Expr, Expr] | None:
    """(a, b) when `c` is `a != b` or `!(a == b)` of two whole arrays."""
    if isinstance(c, Not) and isinstance(c.arg, Compare) and c.arg.op == "==":
        c = Compare("!=", c.arg.lhs, c.arg.rhs)
    if isinstance(c, Compare) and c.op == "!=" and isinstance(c.lhs.type, ArrayType):
        return c.lhs, c.rhs
    return None


# ---------------------------------------------------------------------------------------------- evidence
class _Back(RunOnInputs):
    """Counterexamples: the program run on the abstract one's inputs (the abstraction keeps every input call in
    order and adds none). Proofs: the abstract program's, checked on the abstraction of the program."""

    def invariant(self, evidence: Any) -> Any | None:
        return TransformedProof(CellAbstraction.name, evidence) if isinstance(evidence, Proof) else None
