"""The expression language of the IR: small, immutable, typed, hashable.

Why our own AST instead of z3 terms: transformations (LABMC, summaries, acceleration) rewrite programs
syntactically and must print them back as C; the same program must be encodable with integer or bit-vector
semantics. So expressions carry C integer types and are turned into z3 only by `smt.encode`.

Typing rules (the front-end makes every C conversion explicit with `Cast`, so no rule here is implicit):
  * `Binary` arithmetic/bitwise: lhs, rhs and result have the same `IntType`; for shifts only lhs == result.
  * `Compare`: both operands have the same type (an `IntType` or `BOOL`); the result is `BOOL`.
  * `Not/And/Or`: `BOOL` operands.  `Ite`: `BOOL` condition, branches of the result type.
  * `Cast(t, e)`: integer conversion with C semantics (to unsigned: modulo 2^w; to a narrower or differently
    signed type: two's-complement wrap, as gcc does); `Cast(BOOL, e)` is `e != 0`, `Cast(IntType, bool)` is 0/1.
  * `Select(a, i)` / `Store(a, i, v)`: `a` has an `ArrayType`; `i` its index type; `v` its element type.
  * `ForAll(k, lo, hi, body)` / `ArrayFill(a, start, stride, count, k, value)` bind the variable `k` (of an
    `IntType`; `lo`, `hi`, `start`, `count` have its type) in `body` / `value`. They only appear in
    accelerated programs (`transforms/accelerate.py`), which need "for all iterations" and "the cells of all
    iterations" and cannot unroll them. A bound variable has a name no program variable has; `free_vars`,
    `substitute` and `rename` leave it alone.
Signed overflow is undefined in C; with integer semantics a signed result is the mathematical value.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Mapping


# ----------------------------------------------------------------------------------------------- types
@dataclass(frozen=True, slots=True)
class IntType:
    """A C integer type (`bits`, `signed`) or, with `bits=None`, a mathematical integer (CHC inputs)."""
    bits: int | None
    signed: bool

    @property
    def bounded(self) -> bool:
        return self.bits is not None

    @property
    def min(self) -> int | None:
        if self.bits is None:
            return None
        return -(1 << (self.bits - 1)) if self.signed else 0

    @property
    def max(self) -> int | None:
        if self.bits is None:
            return None
        return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1

    def wrap(self, value: int) -> int:
        """C conversion of an arbitrary integer to this type (modulo 2^bits, two's complement)."""
        if self.bits is None:
            return value
        m = 1 << self.bits
        value %= m
        if self.signed and value >= m >> 1:
            value -= m
        return value

    def clamp(self, value: int) -> int:
        """The nearest value of this type: how integer mode reads an array cell (`smt/encode.py`)."""
        if self.bits is None:
            return value
        return min(max(value, self.min), self.max)

    def contains(self, value: int) -> bool:
        return self.bits is None or self.min <= value <= self.max

    def __str__(self) -> str:
        if self.bits is None:
            return "int*"  # mathematical integer
        return f"{'i' if self.signed else 'u'}{self.bits}"


@dataclass(frozen=True, slots=True)
class BoolType:
    def __str__(self) -> str:
        return "bool"


@dataclass(frozen=True, slots=True)
class ArrayType:
    """A total map index -> elem; `size` is the C array length when known (for printing and bounds)."""
    index: IntType
    elem: "IntType | BoolType"
    size: int | None = None

    def __str__(self) -> str:
        return f"{self.elem}[{self.size if self.size is not None else ''}]"


Type = IntType | BoolType | ArrayType

BOOL = BoolType()
MATH_INT = IntType(None, True)
I8, U8 = IntType(8, True), IntType(8, False)
I16, U16 = IntType(16, True), IntType(16, False)
I32, U32 = IntType(32, True), IntType(32, False)
I64, U64 = IntType(64, True), IntType(64, False)


# ----------------------------------------------------------------------------------------- expressions
class Expr:
    """Base class; every node has a `type`. Nodes compare and hash structurally; the hash is kept in the node
    (`_cached_hash`) because terms share sub-terms: a recomputed structural hash walks the shared parts once
    per path to them, exponential in the depth of a term the front-end builds from nested conditionals."""
    __slots__ = ("_h",)
    type: Type

    def children(self) -> tuple["Expr", ...]:
        return ()

    def __str__(self) -> str:  # readable C-like form; emit_c has the exact printer
        from looprover.program.printer import expr_to_str
        return expr_to_str(self)


@dataclass(frozen=True, slots=True)
class Var(Expr):
    name: str
    type: Type


@dataclass(frozen=True, slots=True)
class IntConst(Expr):
    value: int
    type: IntType


@dataclass(frozen=True, slots=True)
class BoolConst(Expr):
    value: bool
    type: BoolType = BOOL


ARITH_OPS = ("+", "-", "*", "/", "%")
BIT_OPS = ("&", "|", "^", "<<", ">>")
CMP_OPS = ("==", "!=", "<", "<=", ">", ">=")
UNARY_OPS = ("-", "~")


@dataclass(frozen=True, slots=True)
class Unary(Expr):
    op: str  # '-' (negation) or '~' (bitwise complement)
    arg: Expr
    type: IntType

    def children(self):
        return (self.arg,)


@dataclass(frozen=True, slots=True)
class Binary(Expr):
    op: str  # one of ARITH_OPS + BIT_OPS; '/' and '%' truncate toward zero as in C
    lhs: Expr
    rhs: Expr
    type: IntType

    def children(self):
        return (self.lhs, self.rhs)


@dataclass(frozen=True, slots=True)
class Compare(Expr):
    op: str  # one of CMP_OPS; signedness of the operand type decides the order in bit-vector mode
    lhs: Expr
    rhs: Expr
    type: BoolType = BOOL

    def children(self):
        return (self.lhs, self.rhs)


@dataclass(frozen=True, slots=True)
class Not(Expr):
    arg: Expr
    type: BoolType = BOOL

    def children(self):
        return (self.arg,)


@dataclass(frozen=True, slots=True)
class And(Expr):
    args: tuple[Expr, ...]
    type: BoolType = BOOL

    def children(self):
        return self.args


@dataclass(frozen=True, slots=True)
class Or(Expr):
    args: tuple[Expr, ...]
    type: BoolType = BOOL

    def children(self):
        return self.args


@dataclass(frozen=True, slots=True)
class Ite(Expr):
    cond: Expr
    then: Expr
    orelse: Expr
    type: Type

    def children(self):
        return (self.cond, self.then, self.orelse)


@dataclass(frozen=True, slots=True)
class Cast(Expr):
    type: Type  # IntType or BOOL
    arg: Expr

    def children(self):
        return (self.arg,)


@dataclass(frozen=True, slots=True)
class Select(Expr):
    array: Expr
    index: Expr
    type: Type

    def children(self):
        return (self.array, self.index)


@dataclass(frozen=True, slots=True)
class Store(Expr):
    array: Expr
    index: Expr
    value: Expr
    type: ArrayType

    def children(self):
        return (self.array, self.index, self.value)


@dataclass(frozen=True, slots=True)
class ConstArray(Expr):
    """The array holding `value` at every index (zero-initialised globals)."""
    value: Expr
    type: ArrayType

    def children(self):
        return (self.value,)


@dataclass(frozen=True, slots=True)
class ForAll(Expr):
    """`body` holds for every value of `var` in [lo, hi) (mathematical order; true when the range is empty)."""
    var: Var
    lo: Expr
    hi: Expr
    body: Expr
    type: BoolType = BOOL

    def children(self):
        return (self.lo, self.hi, self.body)


@dataclass(frozen=True, slots=True)
class ArrayFill(Expr):
    """`array` with cell `start + stride*k` set to `value[var := k]` for every k in [0, count).

    The cell numbers are computed mathematically and must lie in the index type's range (they are then
    distinct, as `stride != 0`); a fill that leaves the range is undefined (the interpreter refuses it). This
    is the exact effect of `count` iterations of a loop path writing `a[start + stride*k] = value`."""
    array: Expr
    start: Expr
    stride: int
    count: Expr
    var: Var
    value: Expr
    type: ArrayType

    def children(self):
        return (self.array, self.start, self.count, self.value)


BINDERS = (ForAll, ArrayFill)


def _cached_hash(generated):
    def __hash__(self) -> int:
        try:
            return self._h
        except AttributeError:
            h = generated(self)
            object.__setattr__(self, "_h", h)   # not pickled (dataclass pickles fields): string hashes differ
            return h
    return __hash__


for _cls in (Var, IntConst, BoolConst, Unary, Binary, Compare, Not, And, Or, Ite, Cast, Select, Store, ConstArray,
             ForAll, ArrayFill):
    _cls.__hash__ = _cached_hash(_cls.__hash__)

TRUE = BoolConst(True)
FALSE = BoolConst(False)


# ------------------------------------------------------------------------------------- constructors
# Smart constructors fold the trivial cases so that generated programs stay readable.

def const(value: int, type_: IntType) -> IntConst:
    return IntConst(type_.wrap(value), type_)


def and_(*args: Expr) -> Expr:
    return _flat(And, args, False)


def or_(*args: Expr) -> Expr:
    return _flat(Or, args, True)


def _flat(kind: type, args: tuple[Expr, ...], absorbing: bool) -> Expr:
    """`kind`'s (And's, Or's) node of `args`: nested ones flattened, duplicates and the neutral constant dropped,
    the absorbing one (`absorbing`'s BoolConst) returned. Hot in the front-end (a dereference's case split joins
    hundreds of conditions), so each argument is hashed once (a set, not `in flat`, and its size for membership)."""
    flat: list[Expr] = []
    seen: set[Expr] = set()
    for a in args:
        if isinstance(a, kind):
            flat.extend(a.args)
            seen.update(a.args)
        elif isinstance(a, BoolConst):
            if a.value == absorbing:
                return TRUE if absorbing else FALSE
        else:
            k = len(seen)
            seen.add(a)
            if len(seen) != k:
                flat.append(a)
    if not flat:
        return FALSE if absorbing else TRUE
    return flat[0] if len(flat) == 1 else kind(tuple(flat))


def not_(a: Expr) -> Expr:
    if isinstance(a, BoolConst):
        return BoolConst(not a.value)
    if isinstance(a, Not):
        return a.arg
    return Not(a)


def implies(a: Expr, b: Expr) -> Expr:
    return or_(not_(a), b)


def ite(c: Expr, t: Expr, e: Expr) -> Expr:
    if c == TRUE or t == e:
        return t
    if c == FALSE:
        return e
    return Ite(c, t, e, t.type)


def cmp(op: str, a: Expr, b: Expr) -> Compare:
    assert op in CMP_OPS, op
    return Compare(op, a, b)


def binary(op: str, a: Expr, b: Expr) -> Binary:
    assert op in ARITH_OPS + BIT_OPS, op
    return Binary(op, a, b, a.type)


def cast(t: Type, e: Expr) -> Expr:
    """Conversion of `e` to `t`; a no-op when the types agree, folded for constants."""
    if e.type == t:
        return e
    if isinstance(t, BoolType):
        if isinstance(e, IntConst):
            return BoolConst(e.value != 0)
        return Cast(t, e)
    if isinstance(e, IntConst):
        return IntConst(t.wrap(e.value), t)
    if isinstance(e, BoolConst):
        return IntConst(int(e.value), t)
    return Cast(t, e)


# ---------------------------------------------------------------------------------------- traversal
def walk(e: Expr) -> Iterator[Expr]:
    """All sub-expressions, pre-order (iterative: expressions from long unrollings are deep)."""
    stack = [e]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children()))


def free_vars(e: Expr) -> frozenset[Var]:
    """The variables of `e`; each shared sub-term is visited once (`walk` visits it once per path to it)."""
    found: set[Var] = set()
    bound: set[Var] = set()
    seen: set[int] = set()
    stack = [e]
    while stack:
        n = stack.pop()
        if isinstance(n, Var):
            found.add(n)
            continue
        i = id(n)
        if i in seen:
            continue
        seen.add(i)
        if isinstance(n, BINDERS):
            bound.add(n.var)
        stack.extend(n.children())
    return frozenset(found - bound if bound else found)


def rebuild(e: Expr, kids: tuple[Expr, ...]) -> Expr:
    """The same node with new children (types unchanged)."""
    if isinstance(e, Unary):
        return Unary(e.op, kids[0], e.type)
    if isinstance(e, Binary):
        return Binary(e.op, kids[0], kids[1], e.type)
    if isinstance(e, Compare):
        return Compare(e.op, kids[0], kids[1])
    if isinstance(e, Not):
        return not_(kids[0])
    if isinstance(e, And):
        return and_(*kids)
    if isinstance(e, Or):
        return or_(*kids)
    if isinstance(e, Ite):
        return ite(*kids)
    if isinstance(e, Cast):
        return cast(e.type, kids[0])
    if isinstance(e, Select):
        return Select(kids[0], kids[1], e.type)
    if isinstance(e, Store):
        return Store(kids[0], kids[1], kids[2], e.type)
    if isinstance(e, ConstArray):
        return ConstArray(kids[0], e.type)
    if isinstance(e, ForAll):
        return ForAll(e.var, kids[0], kids[1], kids[2])
    if isinstance(e, ArrayFill):
        return ArrayFill(kids[0], kids[1], e.stride, kids[2], e.var, kids[3], e.type)
    return e


def transform(e: Expr, fn: Callable[[Expr], Expr | None], memos: dict | None = None) -> Expr:
    """Bottom-up rewrite: `fn(node)` returns a replacement or None to keep the (rebuilt) node. Variables bound
    by a `ForAll`/`ArrayFill` are not shown to `fn` inside it. A node whose children come back unchanged is kept
    (not rebuilt). `memos`, passed to several calls with the same `fn`, shares their rewritten sub-terms: the
    statements of one program share large ones (the front-end's pointer ites)."""
    memos = {} if memos is None else memos
    free = memos.setdefault(frozenset(), {})

    def go(n: Expr, bound: frozenset) -> Expr:
        memo = memos.setdefault(bound, {}) if bound else free
        done = memo.get(n)          # (one hash per node: the front-end transforms millions)
        if done is not None:
            return done
        if bound and n in bound:
            memo[n] = n
            return n
        kids = n.children()
        inner = bound | {n.var} if isinstance(n, BINDERS) else bound
        if kids:
            new_kids = tuple(go(k, inner) for k in kids)
            new = n if all(a is b for a, b in zip(new_kids, kids)) else rebuild(n, new_kids)
        else:
            new = n
        r = fn(new)
        done = memo[n] = new if r is None else r
        return done

    return go(e, frozenset())


def substitute(e: Expr, mapping: Mapping[Var, Expr]) -> Expr:
    if not mapping:
        return e
    return transform(e, lambda n: mapping.get(n) if isinstance(n, Var) else None)


def rename(e: Expr, fn: Callable[[str], str]) -> Expr:
    return transform(e, lambda n: Var(fn(n.name), n.type) if isinstance(n, Var) else None)


def conjuncts(e: Expr) -> Iterable[Expr]:
    return e.args if isinstance(e, And) else (e,)
