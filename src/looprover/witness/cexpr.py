"""Invariants as C expressions, both ways: printed from z3 formulas, parsed back into z3 formulas.

Why a small C subset with a range check: an invariant in a witness is read with C's semantics (integer
promotions, unsigned wrap-around, overflow is undefined), while our invariants are formulas over mathematical
integers. The two agree when no arithmetic wraps or overflows (a quotient `/` or remainder `%`, by a positive
constant, is read as C's truncating one; z3's Euclidean `mod` and `div` of a possibly negative term are printed as
`(e % c + c) % c` and `(e - (e % c + c) % c) / c`; an integer `If` is C's `c ? a : b`, which is how the wrap-around
of unsigned arithmetic in our encoding reads), so both directions accept only expressions in which
(a) every variable either fits in `int` (signed up to 32 bits, unsigned below 32) or is cast to `long long`, (b) an
arithmetic term is computed in `long long` if any operand is (a cast or an `LL` constant), else in `int`, and
(c) the range of every arithmetic term, computed from the variables' C types, fits in the type it is computed in.
Then the C value is the mathematical value, and the formula means what the C expression means. The printer emits
exactly this subset (casting all variables to `long long` unless every one is a plain `int` and the terms fit), and
an invariant it cannot print within it (division, bit-vectors, arrays, too-wide terms) is left out, never weakened.
Format 2.1's transition invariants also name a variable's value at an earlier visit, `\at(x, AnyPrev)`: a variable
of x's type to both directions (`at_any_prev`); the other `\at` labels are not read.

Quantified invariants over arrays (`∀k ∈ [lo, hi): φ(a[k])`, k-induction's array candidates) have no C
expression; they are written in ACSL (`acsl_expression`), as `\forall integer k; lo <= k && k < hi ==> φ(a[k])`:
ACSL reads every arithmetic term over the mathematical integers, so no range check is needed (`check_acsl`), and
a cell `a[k]` means the C value stored there, which our integer encoding reads clamped to the element type
(`smt.encode.cell_read`; the same value wherever the program has no signed overflow).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterator, Mapping

import z3

from looprover.program.expr import ArrayType, BoolType, IntType, Type
from looprover.smt.encode import truncating_divmod

INT = (-(1 << 31), (1 << 31) - 1)
LLONG = (-(1 << 63), (1 << 63) - 1)


class NotC(Exception):
    """The formula or text is outside the C subset whose meaning is the mathematical one."""


# ------------------------------------------------------------------------------------------------ AST
@dataclass(frozen=True)
class Node:
    op: str                     # var, const, cast, neg, + - * % /, ite, cmp ops, not, and, or; ACSL: forall,
    args: tuple = ()            # implies, index (cell `name[args[0]]`)
    name: str = ""              # var: the C name; forall: the bound variable; index: the array
    value: int = 0              # const
    ll: bool = False            # const: LL suffix


CMP = ("==", "!=", "<", "<=", ">", ">=")
ARITH = ("+", "-", "*", "%", "/")


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


def check_acsl(n: Node, types: Mapping[str, Type]) -> None:
    """Raise NotC unless `n` is a Boolean ACSL expression over `types` that we read exactly: the C subset's
    operators without its range conditions (ACSL's arithmetic is mathematical), `==>`, `\\forall integer k;` and
    cells `a[e]` of arrays of integers."""
    if n.op in ("and", "or", "not", "implies"):
        for a in n.args:
            check_acsl(a, types)
    elif n.op == "forall":
        check_acsl(n.args[0], {**types, n.name: MATH})
    elif n.op in CMP:
        for a in n.args:
            _acsl_term(a, types)
    elif n.op == "var" and isinstance(types.get(n.name), BoolType):
        pass
    elif not (n.op == "const" and n.value in (0, 1) and not n.ll):
        raise NotC(f"not a condition: {to_c(n)}")


MATH = IntType(None, True)      # ACSL's `integer`


def _acsl_term(n: Node, types: Mapping[str, Type]) -> None:
    if n.op == "var":
        if not isinstance(types.get(n.name), (IntType, BoolType)):
            raise NotC(f"{n.name} is no integer variable here")
    elif n.op == "index":
        t = types.get(n.name)
        if not (isinstance(t, ArrayType) and isinstance(t.elem, IntType)):
            raise NotC(f"{n.name} is no array of integers here")
        _acsl_term(n.args[0], types)
    elif n.op == "ite":
        check_acsl(n.args[0], types)
        _acsl_term(n.args[1], types)
        _acsl_term(n.args[2], types)
    elif n.op in ("%", "/") and not (n.args[1].op == "const" and n.args[1].value > 0):
        raise NotC(f"{to_c(n)}: by a non-constant or non-positive divisor")
    elif n.op in ARITH or n.op in ("neg", "cast"):
        for a in n.args:
            _acsl_term(a, types)
    elif n.op != "const":
        raise NotC(f"not an integer term: {to_c(n)}")


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
    elif n.op == "ite":
        # both branches are converted to the wider of their types (long long keeps an int's value)
        _bool(n.args[0], types)
        (a0, a1), la = _arith(n.args[1], types)
        (b0, b1), lb = _arith(n.args[2], types)
        r, ll = (min(a0, b0), max(a1, b1)), la or lb
    elif n.op in ARITH:
        (a0, a1), la = _arith(n.args[0], types)
        (b0, b1), lb = _arith(n.args[1], types)
        ll = la or lb
        if n.op == "%":
            # C's truncating remainder by a positive constant: the dividend's sign, magnitude below the divisor
            if not (n.args[1].op == "const" and b0 > 0):
                raise NotC(f"{to_c(n)}: remainder by a non-constant or non-positive divisor")
            return (max(min(a0, 0), 1 - b0), min(max(a1, 0), b0 - 1)), ll
        if n.op == "/":
            # C's truncating quotient by a positive constant: monotone in the dividend
            if not (n.args[1].op == "const" and b0 > 0):
                raise NotC(f"{to_c(n)}: quotient by a non-constant or non-positive divisor")
            return (_trunc_div(a0, b0), _trunc_div(a1, b0)), ll
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


def _trunc_div(a: int, c: int) -> int:
    return a // c if a >= 0 else -((-a) // c)


# ------------------------------------------------------------------------------------------- printing
_PREC = {"implies": 0, "or": 1, "and": 2, "==": 3, "!=": 3, "<": 4, "<=": 4, ">": 4, ">=": 4, "+": 5, "-": 5,
         "*": 6, "%": 6, "/": 6}


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
    if n.op == "ite":
        return f"({to_c(n.args[0], 1)} ? {to_c(n.args[1], 1)} : {to_c(n.args[2], 1)})"
    if n.op == "index":
        return f"{n.name}[{to_c(n.args[0])}]"
    if n.op == "forall":             # extends as far right as it can: parenthesised inside anything
        s = f"\\forall integer {n.name}; {to_c(n.args[0])}"
        return f"({s})" if outer else s
    if n.op == "implies":
        s = f"{to_c(n.args[0], 1)} ==> {to_c(n.args[1])}"
        return f"({s})" if outer else s
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
    try:
        plain = _lower_mod(_node(f, names, cast=False), types)
        check(plain, types)
        return to_c(plain)
    except NotC:
        wide = _lower_mod(_node(f, names, cast=True), types)
        check(wide, types)
        return to_c(wide)


def acsl_from_z3(f: z3.ExprRef, names: Callable[[z3.ExprRef], str | None], types: Mapping[str, Type]) -> str:
    """`f` as ACSL (module docstring): like `from_z3`, and also universal quantifiers over integers and reads of
    integer arrays in integer mode (`smt.encode.cell_read`). Raises NotC for anything else."""
    free = (n for n in ("k", "l", "m", *(f"k{i}" for i in range(1, 100))) if n not in types)
    n = _lower_mod(_node(f, names, cast=False, types=types, bound=free), types)
    check_acsl(n, types)
    return to_c(n)


def expression_format(text: str) -> str:
    """The witness format of a printed invariant: ACSL when it quantifies or reads an array cell, else C."""
    return "acsl_expression" if "\\forall" in text or "[" in text else "c_expression"


def _lower_mod(n: Node, types: Mapping[str, Type]) -> Node:
    """`n` with each Euclidean remainder and quotient (`mod`, `div`, from z3's) written with C's truncating `%`
    and `/`: as they are when the dividend cannot be negative, else as `(e % c + c) % c` (the inner remainder lies
    in (-c, c), so the sum is non-negative and the outer one is the Euclidean value) and `(e - that) / c` (an
    exact division)."""
    if n.op in ("var", "const"):
        return n
    if n.op in ("==", "!=") and any(a.op == "mod" for a in n.args) and \
            any(a.op == "const" and a.value == 0 for a in n.args):
        # zero for the same dividends whichever the remainder: C's plain `%`
        n = Node(n.op, tuple(Node("%", a.args) if a.op == "mod" else a for a in n.args))
    args = tuple(_lower_mod(a, types) for a in n.args)
    if n.op not in ("mod", "div"):
        return Node(n.op, args, n.name, n.value, n.ll)
    e, c = args
    if c.op != "const" or c.value <= 0:
        raise NotC("division by a non-constant or non-positive divisor")
    try:
        (lo, _), _ = _arith(e, types)
    except NotC:                # an ACSL term (a cell, a bound variable): no range known
        lo = -1
    if lo >= 0:
        return Node("%" if n.op == "mod" else "/", (e, c))
    euclid = Node("%", (Node("+", (Node("%", (e, c)), c)), c))
    return euclid if n.op == "mod" else Node("/", (Node("-", (e, euclid)), c))


def _node(t: z3.ExprRef, names, cast: bool, types: Mapping[str, Type] | None = None,
          bound: Iterator[str] | None = None) -> Node:
    """`t` as an AST; with `types` and `bound` (names for bound variables), ACSL's quantifiers and cells too."""
    def sub(c: z3.ExprRef) -> Node:
        return _node(c, names, cast, types, bound)
    if bound is not None:
        got = _acsl_node(t, names, types, bound, sub)
        if got is not None:
            return got
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
    got = truncating_divmod(t)
    if got is not None:
        # C's truncating remainder or quotient as `smt.encode` writes it: If(a >= 0, a % c, -((-a) % c))
        op, a, c = got
        return Node(op, (sub(a), Node("const", value=c, ll=cast)))
    k = t.decl().kind()
    args = [sub(c) for c in t.children()]
    if k == z3.Z3_OP_ITE:
        c, a, b = args
        if t.sort() == z3.BoolSort():
            return Node("or", (Node("and", (c, a)), Node("and", (Node("not", (c,)), b))))
        return Node("ite", (c, a, b))
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
    if k in (z3.Z3_OP_MOD, z3.Z3_OP_IDIV):
        # Euclidean: `_lower_mod` writes it with C's `%` and `/`
        return Node("mod" if k == z3.Z3_OP_MOD else "div", tuple(args))
    raise NotC(f"operator {t.decl().name()} has no C counterpart here")


def _acsl_node(t: z3.ExprRef, names, types: Mapping[str, Type], bound: Iterator[str], sub) -> Node | None:
    """A universal quantifier over an integer (`forall`, the range guard `¬(lo ≤ k) ∨ ¬(k < hi) ∨ φ` written
    `lo <= k && k < hi ==> φ`) or a cell read `cell_read(a, i)` (`index`) as an AST node; None for other
    terms."""
    if z3.is_quantifier(t):
        if not (t.is_forall() and t.num_vars() == 1 and t.var_sort(0) == z3.IntSort()):
            raise NotC("a quantifier other than a universal one over an integer")
        name = next(bound)
        k = z3.Int(f"!bound {name}")

        def inner(c: z3.ExprRef) -> str | None:
            return name if z3.eq(c, k) else names(c)
        body = _node(z3.substitute_vars(t.body(), k), inner, False, types, bound)
        if body.op == "or" and body.args[0].op == "not":
            guards = [a.args[0] for a in body.args if a.op == "not"]
            rest = [a for a in body.args if a.op != "not"] or [Node("const", value=0)]
            if len(guards) + len(rest) == len(body.args):
                body = Node("implies", (guards[0] if len(guards) == 1 else Node("and", tuple(guards)),
                                        rest[0] if len(rest) == 1 else Node("or", tuple(rest))))
        return Node("forall", (body,), name=name)
    read = _cell(t)
    if read is None:
        return None
    array, index, clamp = read
    name = names(array)
    elem = getattr(types.get(name), "elem", None) if name is not None else None
    if not isinstance(elem, IntType):
        raise NotC(f"{array} is no array of integers at this location")
    if (clamp if elem.bounded else None) != ((elem.min, elem.max) if elem.bounded else None):
        raise NotC(f"a read of {name} that is not the C value of its cell")
    return Node("index", (sub(index),), name=name)


def _cell(t: z3.ExprRef) -> tuple[z3.ExprRef, z3.ExprRef, tuple[int, int] | None] | None:
    """(array, index, clamp range) when `t` is `cell_read(array, index)` of integer mode (clamped) or a plain
    Select (no clamp); else None."""
    if z3.is_select(t) and z3.is_const(t.arg(0)):
        return t.arg(0), t.arg(1), None
    if not z3.is_app_of(t, z3.Z3_OP_ITE):
        return None
    c, lo, rest = t.children()
    if not (z3.is_app_of(c, z3.Z3_OP_LT) and z3.is_select(c.arg(0)) and z3.is_int_value(lo)
            and z3.eq(c.arg(1), lo) and z3.is_app_of(rest, z3.Z3_OP_ITE)):
        return None
    r = c.arg(0)
    c2, hi, same = rest.children()
    if not (z3.is_app_of(c2, z3.Z3_OP_GT) and z3.eq(c2.arg(0), r) and z3.eq(c2.arg(1), hi)
            and z3.is_int_value(hi) and z3.eq(same, r) and z3.is_const(r.arg(0))):
        return None
    return r.arg(0), r.arg(1), (lo.as_long(), hi.as_long())


# -------------------------------------------------------------------------------------------- parsing
_TOKEN = re.compile(r"\s*(?:(\d+)([uUlL]*)|([A-Za-z_]\w*)|(==>|\|\||&&|==|!=|<=|>=|[-+*%/()<>!?:;\[\]])"
                    r"|\\at\s*\(\s*([A-Za-z_]\w*)\s*,\s*([A-Za-z_]\w*)\s*\)|(\\forall\b))")
ANY_PREV = "AnyPrev"


def at_any_prev(name: str) -> str:
    """How the format 2.1 names variable `name`'s value at any earlier visit of the same location in the same
    execution of its loop (`ext_c_expression`): the name the parser gives it, and the printer prints."""
    return f"\\at({name}, {ANY_PREV})"


def parse(text: str) -> Node:
    """A C expression of the subset (or an ACSL one, `check_acsl`) as an AST; NotC for anything else."""
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
        elif m.group(7) is not None:
            toks.append(("op", "\\forall"))
        elif m.group(5) is not None:
            if m.group(6) != ANY_PREV:
                raise NotC(f"\\at(..., {m.group(6)}) is not supported (only {ANY_PREV})")
            toks.append(("id", at_any_prev(m.group(5))))
        else:
            toks.append(("op", m.group(4)))
    p = _Parser(toks)
    n = p.top()
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

    def top(self) -> Node:
        """ACSL's `\\forall integer k; e` and `a ==> b` (both as far right as they reach), else `conditional`."""
        if self.take("\\forall"):
            if self.peek() != ("id", "integer"):
                raise NotC("a bound variable other than an `integer` one")
            self.i += 1
            kind, name = self.peek()
            self.i += 1
            if kind != "id" or not self.take(";"):
                raise NotC("malformed \\forall")
            return Node("forall", (self.top(),), name=name)
        a = self.conditional()
        if self.take("==>"):
            return Node("implies", (a, self.top()))
        return a

    def conditional(self) -> Node:
        """`c ? a : b` (right-associative, below `||`) or an expression without one."""
        cond = self.expr(1)
        if not self.take("?"):
            return cond
        a = self.conditional()
        if not self.take(":"):
            raise NotC("missing : of ?")
        return Node("ite", (cond, a, self.conditional()))

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
            inner = self.top()
            if not self.take(")"):
                raise NotC("missing )")
            return inner
        kind, val = self.peek()
        self.i += 1
        if kind == "num":
            return Node("const", value=val[0], ll=val[1])
        if kind == "id" and self.take("["):
            index = self.top()
            if not self.take("]"):
                raise NotC("missing ]")
            return Node("index", (index,), name=val)
        if kind == "id":
            return Node("var", name=val)
        raise NotC(f"unexpected {val!r}")


def to_z3(n: Node, env: Mapping[str, z3.ExprRef | Callable[[z3.ExprRef], z3.ExprRef]]) -> z3.ExprRef:
    """The mathematical meaning of a checked AST over `env` (C name -> z3 constant; for an array, the function
    from an index to its cell's value, `smt.encode.cell_read`)."""
    if n.op == "var":
        return env[n.name]
    if n.op == "index":
        return env[n.name](to_z3(n.args[0], env))
    if n.op == "forall":
        k = z3.FreshInt(n.name)
        return z3.ForAll([k], as_condition(to_z3(n.args[0], {**env, n.name: k})))
    if n.op == "const":
        return z3.IntVal(n.value)
    if n.op == "cast":
        return to_z3(n.args[0], env)
    args = [to_z3(a, env) for a in n.args]
    if n.op == "neg":
        return -args[0]
    if n.op == "not":
        return z3.Not(as_condition(args[0]))
    if n.op == "ite":
        return z3.If(as_condition(args[0]), args[1], args[2])
    if n.op == "and":
        return z3.And([as_condition(a) for a in args])
    if n.op == "or":
        return z3.Or([as_condition(a) for a in args])
    if n.op == "implies":
        return z3.Implies(as_condition(args[0]), as_condition(args[1]))
    a, b = args
    if n.op in ("%", "/"):
        # C's truncating remainder and quotient (`check` admits only positive constant divisors)
        return z3.If(a >= 0, a % b, -((-a) % b)) if n.op == "%" else z3.If(a >= 0, a / b, -((-a) / b))
    return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "==": lambda: a == b,
            "!=": lambda: a != b, "<": lambda: a < b, "<=": lambda: a <= b, ">": lambda: a > b,
            ">=": lambda: a >= b}[n.op]()


def as_condition(t: z3.ExprRef) -> z3.BoolRef:
    """C's truth value of `t`: a condition as it is, an integer (the constants 0 and 1) as `t != 0`."""
    if z3.is_bool(t):
        return t
    return t != 0


# ------------------------------------------------------------------------------ C expression syntax (any C)
_C_TOKEN = re.compile(r"""\s*(?:
    (?P<num>(?:0[xX][0-9a-fA-F]+|\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)[uUlLfF]*)
  | (?P<chr>'(?:[^'\\]|\\.)+')
  | (?P<str>"(?:[^"\\]|\\.)*")
  | (?P<id>[A-Za-z_]\w*)
  | (?P<op>->|\+\+|--|<<=|>>=|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^~!<>?:,.()\[\]=]|[-+*/%&|^]=)
)""", re.X)
_TYPE_WORDS = {"unsigned", "signed", "long", "short", "int", "char", "_Bool", "float", "double", "const",
               "volatile", "struct", "union", "enum"}
_BINARY = {"||", "&&", "|", "^", "&", "==", "!=", "<", "<=", ">", ">=", "<<", ">>", "+", "-", "*", "/", "%", ",",
           "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="}


def c_syntax_error(text: str) -> str | None:
    """Why `text` is not a C expression (its syntax only: names need no declaration, `(name)` may be a cast to a
    typedef), or None when it is one. A witness's value that `parse` does not read is outside our subset when it
    is C, and no invariant at all when it is not."""
    toks: list[str] = []
    pos, text = 0, text.strip()
    while pos < len(text):
        m = _C_TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            return f"no C token at {text[pos:pos + 20]!r}"
        pos = m.end()
        toks.append("x" if m.group("num") or m.group("chr") or m.group("str") else
                    (m.group("id") if m.group("id") else m.group("op")))
    if not toks:
        return "empty"
    i = 0

    def peek() -> str:
        return toks[i] if i < len(toks) else ""

    def expr() -> None:          # binary and ternary operators: precedence does not matter for syntax
        nonlocal i
        unary()
        while True:
            if peek() in _BINARY:
                i += 1
                unary()
            elif peek() == "?":
                i += 1
                expr()
                if peek() != ":":
                    raise NotC("'?' without ':'")
                i += 1
                unary()
            else:
                return

    def unary() -> None:
        nonlocal i
        if peek() in ("-", "+", "!", "~", "*", "&", "++", "--", "sizeof"):
            i += 1
            unary()
            return
        if peek() == "(":
            i += 1
            expr()
            if peek() != ")":
                raise NotC("missing ')'")
            i += 1
            if peek() and (peek()[0].isalnum() or peek() in ("(", "-", "+", "!", "~", "*", "&")) and \
                    peek() not in _BINARY:
                unary()               # a cast: `(type) operand`
                return
        elif peek() and (peek()[0].isalpha() or peek()[0] == "_"):
            i += 1
            while toks[i - 1] in _TYPE_WORDS and peek() and (peek()[0].isalpha() or peek()[0] == "_"):
                i += 1                # a type name of several words: `unsigned int`, `struct s`
        else:
            raise NotC(f"unexpected {peek()!r}" if peek() else "unexpected end")
        while peek() in ("[", "(", ".", "->", "++", "--"):        # postfix
            op = peek()
            i += 1
            if op in ("[", "("):
                close = "]" if op == "[" else ")"
                if peek() != close:
                    expr()
                if peek() != close:
                    raise NotC(f"missing {close!r}")
                i += 1
            elif op in (".", "->"):
                if not peek() or not (peek()[0].isalpha() or peek()[0] == "_"):
                    raise NotC(f"a member name must follow {op!r}")
                i += 1
    try:
        expr()
    except NotC as exc:
        return str(exc)
    return None if i == len(toks) else f"unexpected {toks[i]!r}"
