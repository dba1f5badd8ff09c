"""Expressions as C source text.

The output is valid C with the IR's meaning: each operation is computed in its IR type (a cast is printed
where C's integer promotions would otherwise change the type), so `emit_c` can reuse it and gcc/CBMC read
the same semantics. Stores cannot be C expressions; they are printed as `__store(a, i, v)` here and
`emit_c` turns `a = Store(a, i, v)` into `a[i] = v;`; likewise `__fill(...)` for `ArrayFill`. A `ForAll` is a
GNU statement expression (a loop over its range), which gcc compiles.
"""
from __future__ import annotations

from looprover.program.expr import (
    And, ArrayFill, ArrayType, ConstArray, Binary, BoolConst, BoolType, Cast, Compare, Expr, ForAll, IntConst,
    IntType, Ite, Not, Or, Select, Store, Unary, Var,
)

_C_NAMES = {
    (8, True): "signed char", (8, False): "unsigned char",
    (16, True): "short", (16, False): "unsigned short",
    (32, True): "int", (32, False): "unsigned int",
    (64, True): "long long", (64, False): "unsigned long long",
}


def c_type(t) -> str:
    """C spelling of a scalar IR type (mathematical integers become `long long`, the widest we have)."""
    if isinstance(t, BoolType):
        return "_Bool"
    if isinstance(t, IntType):
        if t.bits is None:
            return "long long"
        if t.bits == 1:
            return "_Bool"
        if t.bits > 64:     # accelerated programs compute closed forms in wide types (gcc's 128-bit integers)
            return "__int128" if t.signed else "unsigned __int128"
        return _C_NAMES.get((t.bits, t.signed), "long long" if t.signed else "unsigned long long")
    if isinstance(t, ArrayType):
        return c_type(t.elem)
    raise TypeError(t)


def c_literal(value: int, t) -> str:
    if isinstance(t, BoolType):
        return "1" if value else "0"
    suffix = ""
    if isinstance(t, IntType) and t.bits is not None and t.bits > 32:
        suffix = "ll" if t.signed else "ull"
    elif isinstance(t, IntType) and not t.signed:
        suffix = "u"
    if value < 0:
        # -2147483648 is not a literal in C (it is -(2147483648)); print it as (-2147483647-1).
        return f"({value + 1}{suffix}-1{suffix})" if isinstance(t, IntType) and value == t.min else f"({value}{suffix})"
    return f"{value}{suffix}"


def _narrow(t) -> bool:
    """True if C would promote this type before arithmetic (so the result must be cast back)."""
    return isinstance(t, IntType) and t.bits is not None and t.bits < 32


def expr_to_str(e: Expr) -> str:
    if isinstance(e, Var):
        return e.name
    if isinstance(e, IntConst):
        return c_literal(e.value, e.type)
    if isinstance(e, BoolConst):
        return "1" if e.value else "0"
    if isinstance(e, Unary):
        s = f"({e.op}{expr_to_str(e.arg)})"
        return f"(({c_type(e.type)}){s})" if _narrow(e.type) else s
    if isinstance(e, Binary):
        s = f"({expr_to_str(e.lhs)} {e.op} {expr_to_str(e.rhs)})"
        return f"(({c_type(e.type)}){s})" if _narrow(e.type) else s
    if isinstance(e, Compare):
        return f"({expr_to_str(e.lhs)} {e.op} {expr_to_str(e.rhs)})"
    if isinstance(e, Not):
        return f"(!{expr_to_str(e.arg)})"
    if isinstance(e, And):
        return "(" + " && ".join(expr_to_str(a) for a in e.args) + ")"
    if isinstance(e, Or):
        return "(" + " || ".join(expr_to_str(a) for a in e.args) + ")"
    if isinstance(e, Ite):
        return f"({expr_to_str(e.cond)} ? {expr_to_str(e.then)} : {expr_to_str(e.orelse)})"
    if isinstance(e, Cast):
        if isinstance(e.type, BoolType):
            return f"({expr_to_str(e.arg)} != 0)"
        return f"(({c_type(e.type)}){expr_to_str(e.arg)})"
    if isinstance(e, Select):
        return f"{expr_to_str(e.array)}[{expr_to_str(e.index)}]"
    if isinstance(e, Store):
        return f"__store({expr_to_str(e.array)}, {expr_to_str(e.index)}, {expr_to_str(e.value)})"
    if isinstance(e, ConstArray):
        return f"__const_array({expr_to_str(e.value)})"
    if isinstance(e, ForAll):
        k = e.var.name
        return (f"({{ _Bool {k}_ok = 1; for ({c_type(e.var.type)} {k} = {expr_to_str(e.lo)}; {k} < "
                f"{expr_to_str(e.hi)}; {k}++) if (!{expr_to_str(e.body)}) {{ {k}_ok = 0; break; }} {k}_ok; }})")
    if isinstance(e, ArrayFill):
        return (f"__fill({expr_to_str(e.array)}, {expr_to_str(e.start)}, {e.stride}, {expr_to_str(e.count)}, "
                f"{e.var.name}, {expr_to_str(e.value)})")
    raise TypeError(f"unknown expression node {type(e).__name__}")
