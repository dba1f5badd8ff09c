"""Which expressions have side effects, which variables they may write, and keeping already computed values
safe from later writes (`protect`).

Why a module: C leaves the evaluation order of operands open and we fix it left to right; a value computed
first must be copied to a temporary when evaluating a later operand may change a variable it reads (calls,
assignments, ++). `effectful` also decides whether `&&`, `||` and `?:` can stay pure IR expressions.
"""
from __future__ import annotations

import clang.cindex as ci

from looprover.errors import UnsupportedError
from looprover.frontend.c import clang_api as capi
from looprover.frontend.c.cursors import (
    INCDEC_OPS, TK, K, base_decl, called_function, canonical_kind, children, is_array_decay, strip_parens,
)
from looprover.frontend.c.known_functions import (
    ASSUME_FUNCTIONS, INPUT_FUNCTIONS, OUTPUT_FUNCTIONS, TERMINATING_FUNCTIONS, nondet_suffix,
)
from looprover.frontend.c.memory import LV, Cell, Val
from looprover.frontend.c.state import LoweringState
from looprover.program.cfa import Assign
from looprover.program.expr import BoolConst, Expr, IntConst, free_vars, substitute

_MAY_OVERFLOW = frozenset({"+", "-", "*", "/", "%", "<<", ">>"})   # binary operators that may overflow or be undefined
_ALL = object()  # may_write: "any global, static or address-taken variable"


class SideEffectMixin(LoweringState):
    """`effectful(c)`, `may_write(cs)`, `threatened(e, writes)`, and `snap`/`protect`/`protect_lv` to copy
    values (or the guards and indices of lvalues) to temporaries when later operands may change them."""

    def effectful(self, c: ci.Cursor) -> bool:
        """May evaluating c do more than compute a value (write, call, block, fail a check)? Then it cannot be
        evaluated unconditionally inside `&&`, `||`, `?:`."""
        key = c.hash, c.extent.start.offset, c.kind
        got = self.effectful_memo.get(key)
        if got is not None:
            return got
        k = c.kind
        r = False
        if k in (K.CALL_EXPR, K.StmtExpr, K.COMPOUND_ASSIGNMENT_OPERATOR):
            r = True
        elif k == K.CXX_UNARY_EXPR:
            r = False  # sizeof/alignof do not evaluate their operand
        elif k == K.BINARY_OPERATOR and capi.binary_op(c) == "=":
            r = True
        elif k == K.UNARY_OPERATOR and (capi.unary_op(c) in INCDEC_OPS or capi.unary_op(c) == capi.UO_DEREF):
            r = True
        elif k == K.MEMBER_REF_EXPR and children(c) and canonical_kind(children(c)[0]) == TK.POINTER:
            r = True
        elif k == K.ARRAY_SUBSCRIPT_EXPR:
            a, b = children(c)
            base = a if canonical_kind(a) == TK.POINTER else b
            # under valid-memsafety every index is checked, so evaluating one may fail
            r = self.memsafety or not is_array_decay(strip_parens(base))
        if not r and k != K.CXX_UNARY_EXPR:
            r = any(self.effectful(ch) for ch in children(c))
        self.effectful_memo[key] = r
        return r

    @staticmethod
    def operates(c: ci.Cursor) -> bool:
        """Does evaluating c compute an arithmetic operation (one that may overflow or be undefined: binary
        arithmetic, unary minus)? Operands of `sizeof` are not evaluated."""
        stack = [c]
        while stack:
            c = stack.pop()
            k = c.kind
            if (k == K.COMPOUND_ASSIGNMENT_OPERATOR
                    or (k == K.BINARY_OPERATOR and capi.binary_op(c) in _MAY_OVERFLOW)
                    or (k == K.UNARY_OPERATOR and capi.unary_op(c) in (capi.UO_MINUS, *INCDEC_OPS))):
                return True
            if k != K.CXX_UNARY_EXPR:
                stack.extend(children(c))
        return False

    def may_write(self, cs) -> set | object:
        """IR variables that evaluating the expressions cs may write (`_ALL`: any global, static or
        address-taken variable, e.g. through a call)."""
        out: set = set()
        stack = list(cs)
        while stack:
            c = stack.pop()
            k = c.kind
            if k == K.CXX_UNARY_EXPR:
                continue
            target = None
            if k == K.COMPOUND_ASSIGNMENT_OPERATOR or (k == K.BINARY_OPERATOR and capi.binary_op(c) == "="):
                target = children(c)[0]
            elif k == K.UNARY_OPERATOR and capi.unary_op(c) in INCDEC_OPS:
                target = children(c)[0]
            elif k == K.CALL_EXPR:
                sub = self._call_writes(c)
                if sub is _ALL:
                    return _ALL
                out.update(sub)
            if target is not None:
                d = base_decl(target)
                if d is None:
                    return _ALL  # a write through a pointer
                try:
                    obj = self.storage(d, target)
                except UnsupportedError:
                    obj = None
                if obj is not None:
                    out.update(obj.vars.values())
            stack.extend(children(c))
        return out

    def _call_writes(self, c: ci.Cursor):
        """Variables a call may write besides its arguments' effects: nothing for the built-in models,
        the globals written by an inlined body (callee locals are fresh), `_ALL` if unknown."""
        ref = called_function(c)
        if ref is None:
            return _ALL
        name = ref.spelling
        d = ref.get_definition()
        if (nondet_suffix(name, d is not None) is not None or name in ASSUME_FUNCTIONS or name in TERMINATING_FUNCTIONS
                or name in ("__builtin_expect", "__builtin_unreachable")
                or (name in ("__VERIFIER_assert", *OUTPUT_FUNCTIONS) and d is None)
                or (INPUT_FUNCTIONS.get(name) is False and d is None)):
            return set()
        if d is None:
            return set() if name == "reach_error" else _ALL
        key = d.canonical
        memo = self.call_writes_memo
        if key in memo:
            return memo[key] if memo[key] is not None else set()  # None: being computed (recursion)
        memo[key] = None
        res = self.may_write([self.function_body(d)])
        memo[key] = res
        return res

    def threatened(self, e: Expr, mw) -> bool:
        if isinstance(e, (IntConst, BoolConst)):
            return False
        fv = free_vars(e)
        if not fv:
            return False
        if mw is _ALL:
            return bool(fv & self.shared_vars())
        return bool(fv & mw)

    def snap(self, e: Expr) -> Expr:
        if isinstance(e, (IntConst, BoolConst)):
            return e
        t = self.temp(e.type)
        self.emit(Assign(t, e, self.loc))
        self.id_vars.add(t)    # assigned before it is read: its values are e's (`object_ids.py`)
        return t

    def snapped(self, v: Val) -> Val:
        """`v` with every leaf copied to a temporary here: its value now, whatever later code writes (the loops
        a library call makes write memory its arguments may read)."""
        return Val(v.ctype, {p: self.snap(e) for p, e in v.leaves.items()})

    def protect(self, v: Val, later: list) -> Val:
        """Keep v's value if evaluating the `later` expressions may change a variable it reads."""
        if not later or not v.leaves:
            return v
        mw = self.may_write(later)
        if not mw:
            return v
        return Val(v.ctype, {p: (self.snap(e) if self.threatened(e, mw) else e) for p, e in v.leaves.items()})

    def protect_lv(self, lv: LV, later: list) -> LV:
        mw = self.may_write(later) if later else set()
        if not mw:
            return lv
        guards: dict[Expr, Expr] = {}

        def guard(g: Expr) -> Expr:
            if g not in guards:
                guards[g] = self.snap(g) if self.threatened(g, mw) else g
            return guards[g]

        def kept(cell: Cell) -> Cell:
            if cell.index is not None and self.threatened(cell.index, mw):
                return Cell(cell.var, self.snap(cell.index))
            return cell

        alts = [(guard(g), {p: kept(cell) for p, cell in cells.items()}) for g, cells in lv.alts]
        unions = tuple((tuple((guard(g), kept(cell)) for g, cell in tags), m, whole) for tags, m, whole in lv.unions)
        addr = lv.addr
        if addr is not None and (self.threatened(addr[0], mw) or self.threatened(addr[1], mw)):
            addr = (self.snap(addr[0]), self.snap(addr[1]))
        checks = [(self._protect_check(cond, mw), where) for cond, where in lv.checks]
        addr_ok = self.snap(lv.addr_ok) if self.threatened(lv.addr_ok, mw) else lv.addr_ok
        return LV(lv.ctype, alts, addr, checks, unions=unions, addr_ok=addr_ok)

    def _protect_check(self, cond: Expr, mw) -> Expr:
        """A pending access check with the values it reads that later code may change kept, except the liveness
        flags: the access reads those when it happens (a call in between may free the object)."""
        if not self.threatened(cond, mw):
            return cond
        live = set(self.alive.values())
        keep = {v: self.snap(v) for v in sorted(free_vars(cond), key=lambda v: v.name)
                if v not in live and self.threatened(v, mw)}
        return substitute(cond, keep) if keep else cond
