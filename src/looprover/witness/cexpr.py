"""Invariants as C expressions, both ways: printed from z3 formulas, parsed back into z3 formulas.

Why a small C subset with a range check: an invariant in a witness is read with C's semantics (integer
promotions, unsigned wrap-around, overflow is undefined), while our invariants are formulas over mathematical
integers. The two agree when no arithmetic wraps or overflows (and a remainder `%` has a non-negative dividend and
a positive constant divisor), so both directions accept only expressions in which
(a) every variable either fits in `int` (signed up to 32 bits, unsigned below 32) or is cast to `long long`, (b) an
arithmetic term is computed in `long long` if any operand is (a cast or an `LL` constant), else in `int`, and
(c) the range of every arithmetic term, computed from the variables' C types, fits in the type it is computed in.
Then the C value is the mathematical value, and the formula means what the C expression means. The printer emits
exactly this subset (casting all variables to `long long` unless every one is a plain `int` and the terms fit), and
an invariant it cannot print within it (division, bit-vectors, arrays, too-wide terms) is left out, never weakened.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Mapping

import z3

from looprover.program.expr import BoolType, IntType, Type

INT = (-(1 << 31), (1 << 31) - 1)
LLONG = (-(1 << 63), (1 << 63) - 1)


class NotC(Exception):
    """The formula or text is outside the C subset whose meaning is the mathematical one."""


# ------------------------------------------------------------------------------------------------ AST
@dataclass(frozen=True)
class Node:
    op: str                     # var, const, cast, neg, + - *, cmp ops, not, and, or
    args: tuple = ()
    name: str = ""              # var: the C name
    value: int = 0              # const
    ll: bool = False            # const: LL suffix


CMP = ("==", "!=", "<", "<=", ">", ">=")
ARITH = ("+", "-", "*", "%")


def _fits(r: tuple[int, int], t: tuple[int, int]) -> bool:
    return t[0] <= r[0] and r[1] <= t[1]


def range_of(t: Type | None) -> tuple[int, int] | None:
    if isinstance(t, BoolType):
        return (0, 1)
    if isinstance(t, IntType) and t.bits is not None:
        return (-(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1) if t.signed else (0, (1 << t.bits) - 1)
    return None


def check(n: Node, types: Mapping[str, Type]) -> None:
    """Raise NotC unless `n` is a Boolean expression of the subset (module docstring) over `types`."""
    _bool(n, types)


def _bool(n: Node, types: Mapping[str, Type]) -> None:
    if n.op in ("and", "or"):
        for a in n.args:
            _bool(a, types)
    elif n.op == "not":
        _bool(n.args[0], types)
    elif n.op in CMP:
        if _exact_compare(n.args[0], n.args[1], types):
            return
        _arith(n.args[0], types)
        _arith(n.args[1], types)
    elif n.op == "var" and isinstance(types.get(n.name), BoolType):
        pass
    elif n.op == "const" and n.value in (0, 1) and not n.ll:
        pass
    else:
        raise NotC(f"not a condition: {to_c(n)}")


def _exact_compare(a: Node, b: Node, types: Mapping[str, Type]) -> bool:
    """A comparison of two unsigned variables, or of an unsigned variable and a constant in its range: C's usual
    arithmetic conversions keep both values, so C compares the mathematical values."""
    def unsigned(x: Node) -> bool:
        t = types.get(x.name) if x.op == "var" else None
        return isinstance(t, IntType) and t.bits is not None and not t.signed and t.bits <= 64

    def small_const(x: Node) -> bool:
        return x.op == "const" and not x.ll and 0 <= x.value <= INT[1]
    return (unsigned(a) and (unsigned(b) or small_const(b))) or (unsigned(b) and small_const(a))


def _arith(n: Node, types: Mapping[str, Type]) -> tuple[tuple[int, int], bool]:
    """(range, computed in long long) of an arithmetic term."""
    if n.op == "var":
        t = types.get(n.name)
        if t is None:
            raise NotC(f"unknown variable {n.name}")
        r = range_of(t)
        if r is None:
            raise NotC(f"variable {n.name} has no C integer type")
        if not _fits(r, INT):
            raise NotC(f"{n.name} does not fit in int without a cast to long long")
        return r, False
    if n.op == "const":
        if not _fits((n.value, n.value), LLONG if n.ll else INT):
            raise NotC(f"constant {n.value} out of range")
        return (n.value, n.value), n.ll
    if n.op == "cast":
        inner = n.args[0]
        if inner.op == "var":
            r = range_of(types.get(inner.name))
            if r is None or not _fits(r, LLONG):
                raise NotC(f"variable {inner.name} does not fit in long long")
            return r, True
        r, _ = _arith(inner, types)
        return r, True
    if n.op == "neg":
        (lo, hi), ll = _arith(n.args[0], types)
        r = (-hi, -lo)
    elif n.op in ARITH:
        (a0, a1), la = _arith(n.args[0], types)
        (b0, b1), lb = _arith(n.args[1], types)
        ll = la or lb
        if n.op == "%":
            # C's remainder is the mathematical (Euclidean) one for a non-negative dividend and positive divisor
            if not (n.args[1].op == "const" and b0 > 0 and a0 >= 0):
                raise NotC(f"{to_c(n)}: remainder of a possibly negative value or by a non-constant")
            return (0, min(a1, b0 - 1)), ll
        if n.op == "+":
            r = (a0 + b0, a1 + b1)
        elif n.op == "-":
            r = (a0 - b1, a1 - b0)
        else:
            ps = (a0 * b0, a0 * b1, a1 * b0, a1 * b1)
            r = (min(ps), max(ps))
    else:
        raise NotC(f"not an integer term: {to_c(n)}")
    if not _fits(r, LLONG if ll else INT):
        raise NotC(f"{to_c(n)} may overflow {'long long' if ll else 'int'}")
    return r, ll


# ------------------------------------------------------------------------------------------- printing
_PREC = {"or": 1, "and": 2, "==": 3, "!=": 3, "<": 4, "<=": 4, ">": 4, ">=": 4, "+": 5, "-": 5, "*": 6, "%": 6}


def to_c(n: Node, outer: int = 0) -> str:
    if n.op == "var":
        return n.name
    if n.op == "const":
        s = f"{n.value}{'LL' if n.ll else ''}"
        return f"({s})" if n.value < 0 else s
    if n.op == "cast":
        return f"(long long){to_c(n.args[0], 9)}"
    if n.op == "neg":
        return f"-{to_c(n.args[0], 9)}"
    if n.op == "not":
        return f"!{to_c(n.args[0], 9)}"
    if n.op in ("and", "or"):
        p = _PREC[n.op]
        s = f" {'&&' if n.op == 'and' else '||'} ".join(to_c(a, p + 1) for a in n.args)
    else:
        p = _PREC[n.op]
        s = f"{to_c(n.args[0], p)} {n.op} {to_c(n.args[1], p + 1)}"
    return f"({s})" if p < outer or (outer and p <= 3) else s


def from_z3(f: z3.ExprRef, names: Callable[[z3.ExprRef], str | None], types: Mapping[str, Type]) -> str:
    """`f` (a quantifier-free linear integer/Boolean formula over state constants) as C; `names` gives a
    constant's C name (None: not a C variable there). Raises NotC when `f` is outside the subset."""
    plain = _node(f, names, cast=False)
    try:
        check(plain, types)
        return to_c(plain)
    except NotC:
        wide = _node(f, names, cast=True)
        check(wide, types)
        return to_c(wide)


def _node(t: z3.ExprRef, names, cast: bool) -> Node:
    if z3.is_true(t):
        return Node("const", value=1)
    if z3.is_false(t):
        return Node("const", value=0)
    if z3.is_int_value(t):
        return Node("const", value=t.as_long(), ll=cast)
    if z3.is_const(t):
        name = names(t)
        if name is None:
            raise NotC(f"{t} is not a C variable at this location")
        v = Node("var", name=name)
        return Node("cast", (v,)) if cast and t.sort() == z3.IntSort() else v
    if not z3.is_app(t):
        raise NotC(f"unsupported term {t}")
    k = t.decl().kind()
    args = [_node(c, names, cast) for c in t.children()]
    if k == z3.Z3_OP_AND:
        return Node("and", tuple(args))
    if k == z3.Z3_OP_OR:
        return Node("or", tuple(args))
    if k == z3.Z3_OP_NOT:
        return Node("not", (args[0],))
    if k == z3.Z3_OP_IMPLIES:
        return Node("or", (Node("not", (args[0],)), args[1]))
    if k == z3.Z3_OP_EQ and t.children()[0].sort() == z3.BoolSort():
        a, b = args
        return Node("or", (Node("and", (a, b)), Node("and", (Node("not", (a,)), Node("not", (b,))))))
    ops = {z3.Z3_OP_EQ: "==", z3.Z3_OP_LE: "<=", z3.Z3_OP_LT: "<", z3.Z3_OP_GE: ">=", z3.Z3_OP_GT: ">"}
    if k in ops:
        return Node(ops[k], tuple(args))
    if k == z3.Z3_OP_DISTINCT and len(args) == 2:
        return Node("!=", tuple(args))
    if k in (z3.Z3_OP_ADD, z3.Z3_OP_MUL):
        op = "+" if k == z3.Z3_OP_ADD else "*"
        out = args[0]
        for a in args[1:]:
            out = Node(op, (out, a))
        return out
    if k == z3.Z3_OP_SUB:
        out = args[0]
        for a in args[1:]:
            out = Node("-", (out, a))
        return out
    if k == z3.Z3_OP_UMINUS:
        return Node("neg", (args[0],))
    if k == z3.Z3_OP_MOD:
        return Node("%", tuple(args))
    raise NotC(f"operator {t.decl().name()} has no C counterpart here")


# -------------------------------------------------------------------------------------------- parsing
_TOKEN = re.compile(r"\s*(?:(\d+)([uUlL]*)|([A-Za-z_]\w*)|(\|\||&&|==|!=|<=|>=|[-+*%()<>!]))")


def parse(text: str) -> Node:
    """A C expression of the subset as an AST; NotC for anything else."""
    toks: list[tuple[str, object]] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise NotC(f"cannot read {text[pos:pos + 20]!r}")
        pos = m.end()
        if m.group(1) is not None:
            suffix = m.group(2).lower()
            if suffix not in ("", "ll"):
                raise NotC(f"integer suffix {m.group(2)!r}")
            toks.append(("num", (int(m.group(1)), suffix == "ll")))
        elif m.group(3) is not None:
            toks.append(("id", m.group(3)))
        else:
            toks.append(("op", m.group(4)))
    p = _Parser(toks)
    n = p.expr(1)
    if p.i != len(toks):
        raise NotC("trailing tokens")
    return n


class _Parser:
    def __init__(self, toks):
        self.toks, self.i = toks, 0

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else ("end", None)

    def take(self, op: str) -> bool:
        if self.peek() == ("op", op):
            self.i += 1
            return True
        return False

    def expr(self, level: int) -> Node:
        if level == 7:
            return self.unary()
        left = self.expr(level + 1)
        while True:
            kind, val = self.peek()
            op = {"||": "or", "&&": "and"}.get(val, val) if kind == "op" else None
            if op is None or _PREC.get(op) != level:
                return left
            self.i += 1
            right = self.expr(level + 1)
            if op in ("and", "or"):
                left = Node(op, (left.args + (right,)) if left.op == op else (left, right))
            else:
                left = Node(op, (left, right))

    def unary(self) -> Node:
        if self.take("!"):
            return Node("not", (self.unary(),))
        if self.take("-"):
            inner = self.unary()
            if inner.op == "const":
                return Node("const", value=-inner.value, ll=inner.ll)
            return Node("neg", (inner,))
        if self.take("("):
            if self.toks[self.i:self.i + 3] == [("id", "long"), ("id", "long"), ("op", ")")]:
                self.i += 3
                return Node("cast", (self.unary(),))
            inner = self.expr(1)
            if not self.take(")"):
                raise NotC("missing )")
            return inner
        kind, val = self.peek()
        self.i += 1
        if kind == "num":
            return Node("const", value=val[0], ll=val[1])
        if kind == "id":
            return Node("var", name=val)
        raise NotC(f"unexpected {val!r}")


def to_z3(n: Node, env: Mapping[str, z3.ExprRef]) -> z3.ExprRef:
    """The mathematical meaning of a checked AST over `env` (C name -> z3 constant)."""
    if n.op == "var":
        return env[n.name]
    if n.op == "const":
        return z3.IntVal(n.value)
    if n.op == "cast":
        return to_z3(n.args[0], env)
    args = [to_z3(a, env) for a in n.args]
    if n.op == "neg":
        return -args[0]
    if n.op == "not":
        return z3.Not(as_condition(args[0]))
    if n.op == "and":
        return z3.And([as_condition(a) for a in args])
    if n.op == "or":
        return z3.Or([as_condition(a) for a in args])
    a, b = args
    return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "%": lambda: a % b, "==": lambda: a == b,
            "!=": lambda: a != b, "<": lambda: a < b, "<=": lambda: a <= b, ">": lambda: a > b,
            ">=": lambda: a >= b}[n.op]()


def as_condition(t: z3.ExprRef) -> z3.BoolRef:
    """C's truth value of `t`: a condition as it is, an integer (the constants 0 and 1) as `t != 0`."""
    if z3.is_bool(t):
        return t
    return t != 0
