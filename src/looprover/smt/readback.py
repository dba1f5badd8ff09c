"""z3 terms read back as IR expressions.

Why one reader: the Horn-clause front-end turns clause constraints into edges, and acceleration turns the
results of quantifier elimination into guards; both meet the same linear-integer operators, the same SMT-LIB
division semantics and the same need to say which operator they could not take. Constants (and any other
term the caller already knows) come from the caller's `leaf`; everything else is built here, in one integer
type chosen by the caller (mathematical integers for Horn clauses, a wide machine type for acceleration).
"""
from __future__ import annotations

from typing import Callable

import z3

from looprover.program.expr import (
    FALSE, TRUE, ArrayType, ConstArray, Expr, IntConst, IntType, Select, Store, Unary, and_, binary, cmp, const, ite,
    not_, or_,
)

_ARITH = (z3.Z3_OP_ADD, z3.Z3_OP_SUB, z3.Z3_OP_MUL, z3.Z3_OP_UMINUS, z3.Z3_OP_IDIV, z3.Z3_OP_DIV, z3.Z3_OP_MOD)
_FOLD = {z3.Z3_OP_ADD: "+", z3.Z3_OP_SUB: "-", z3.Z3_OP_MUL: "*"}
_CMP = {z3.Z3_OP_LE: "<=", z3.Z3_OP_LT: "<", z3.Z3_OP_GE: ">=", z3.Z3_OP_GT: ">", z3.Z3_OP_EQ: "=="}


class Readback:
    """Callable: a quantifier-free linear integer/Boolean (or integer-array) z3 term -> IR expression. `leaf(t)` gives the
    expression of a term the caller maps (by its own key, usually the term's id), or None; `fail(msg)` makes
    the exception raised for anything else (an unknown constant, a non-linear or unsupported operator)."""

    def __init__(self, leaf: Callable[[z3.ExprRef], Expr | None], int_type: IntType,
                 fail: Callable[[str], Exception]):
        self.leaf = leaf
        self.int_type = int_type
        self.fail = fail
        self.memo: dict[int, Expr] = {}

    def __call__(self, t: z3.ExprRef) -> Expr:
        key = t.get_id()
        if key not in self.memo:
            self.memo[key] = self._read(t)
        return self.memo[key]

    def _read(self, t: z3.ExprRef) -> Expr:
        known = self.leaf(t)
        if known is not None:
            return known
        if z3.is_int_value(t):
            return const(t.as_long(), self.int_type)
        if z3.is_true(t):
            return TRUE
        if z3.is_false(t):
            return FALSE
        if z3.is_const(t):
            raise self.fail(f"unknown constant {t}")
        k = t.decl().kind() if z3.is_app(t) else None
        args = [self(c) for c in t.children()]
        if k in _ARITH and all(isinstance(a, IntConst) for a in args):
            v = z3.simplify(t)      # a constant expression: `(- 2)`, `(* 2 3)` (not `(div 1 0)`: no value)
            if z3.is_int_value(v):
                return const(v.as_long(), self.int_type)
        if k in _FOLD:
            out = args[0]
            for a in args[1:]:
                out = binary(_FOLD[k], out, a)
            return out
        if k == z3.Z3_OP_UMINUS:
            return Unary("-", args[0], self.int_type)
        if k in (z3.Z3_OP_IDIV, z3.Z3_OP_DIV, z3.Z3_OP_MOD):
            return self._euclid(k, args)
        if k in _CMP:
            return cmp(_CMP[k], args[0], args[1])
        if k == z3.Z3_OP_DISTINCT:
            return and_(*[cmp("!=", a, b) for i, a in enumerate(args) for b in args[i + 1:]])
        if k == z3.Z3_OP_AND:
            return and_(*args)
        if k == z3.Z3_OP_OR:
            return or_(*args)
        if k == z3.Z3_OP_NOT:
            return not_(args[0])
        if k == z3.Z3_OP_IMPLIES:
            return or_(not_(args[0]), args[1])
        if k == z3.Z3_OP_XOR:
            return cmp("!=", args[0], args[1])
        if k == z3.Z3_OP_ITE:
            return ite(args[0], args[1], args[2])
        # integer arrays (Horn clauses over `(Array Int Int)`): the caller's array constants are leaves
        if k == z3.Z3_OP_SELECT and isinstance(args[0].type, ArrayType):
            return Select(args[0], args[1], args[0].type.elem)
        if k == z3.Z3_OP_STORE and isinstance(args[0].type, ArrayType):
            return Store(args[0], args[1], args[2], args[0].type)
        if k == z3.Z3_OP_CONST_ARRAY and t.sort().domain().kind() == z3.Z3_INT_SORT and \
                isinstance(args[0].type, IntType):
            return ConstArray(args[0], ArrayType(self.int_type, args[0].type))
        raise self.fail(f"operator {t.decl().name()}")

    def _euclid(self, k, args: list[Expr]) -> Expr:
        """SMT-LIB div/mod (remainder always in [0, |d|), `div x d` = (x - mod x d) / d, exact for either sign
        of d) from C's truncating / and %. The divisor is already folded when it is a constant expression."""
        d = args[1]
        if not isinstance(d, IntConst):
            raise self.fail("div/mod by a non-constant")
        if d.value == 0:
            raise self.fail("div/mod by zero")
        x, ad = args[0], const(abs(d.value), self.int_type)
        r = binary("%", binary("+", binary("%", x, ad), ad), ad)
        if k == z3.Z3_OP_MOD:
            return r
        return binary("/", binary("-", x, r), const(d.value, self.int_type))
