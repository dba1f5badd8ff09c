"""Intervals over the IR's values: the lattice, each operator's abstract meaning, and refinement by a condition.

An abstract state maps variable names to an interval `(lo, hi)` (integers; `-inf`/`inf` for unbounded ends) or,
for a boolean, to `True`/`False`; a variable it does not mention holds any value of its type (the IR's initial
states and `Havoc` give exactly that: `smt.encode` constrains fresh values to their type's range). Arrays are
not tracked: a cell read is any value of its element type, which is also what the integer encoding clamps a
read to. `None` is the empty state (no execution gets here).

Each operator follows the encoding of the mode the proof will be checked in (`smt/encode.py`): unsigned
arithmetic wraps in both; signed arithmetic keeps the mathematical value with integers and wraps with
bit-vectors; a division by an interval that contains zero, or a shift by an amount that is not a constant, is
any value. Where an exact interval would need the wrap's case split, the result is the whole type. Soundness
is what matters here (`tests/absint`: concrete runs stay inside); precision only decides how much is proved.
"""
from __future__ import annotations

import math
from typing import Mapping

from looprover.program.expr import (
    And, ArrayFill, Binary, BoolConst, BoolType, Cast, Compare, ConstArray, Expr, ForAll, IntConst,
    IntType, Ite, Not, Or, Select, Store, Unary, Var,
)

INF = math.inf
_UNTRACKED = (ForAll, ArrayFill, Store, ConstArray)
_MISSING = object()
Bound = int | float                   # an integer, or -inf / inf
Itv = tuple[Bound, Bound]
AbsBool = bool | None                 # None: either
Value = Itv | AbsBool
State = dict[str, Value]
TOP: Itv = (-INF, INF)
ARRAY = "array"                       # the abstract value of an array expression: not tracked
MAX_CASES = 32                        # a disjunction of more undecided cases refines nothing (each costs a state)


_RANGES: dict[IntType, Itv] = {}


def type_range(t: IntType) -> Itv:
    r = _RANGES.get(t)
    if r is None:
        r = _RANGES[t] = (t.min, t.max) if t.bounded else TOP
    return r


def hull(a: Itv, b: Itv) -> Itv:
    return (min(a[0], b[0]), max(a[1], b[1]))


def meet(a: Itv, b: Itv) -> Itv | None:
    lo, hi = max(a[0], b[0]), min(a[1], b[1])
    return (lo, hi) if lo <= hi else None


HUGE = 1 << 130     # a bound beyond this is infinite: chains of products would grow without end in integer mode


def fit(r: Itv, t: IntType, bitvector: bool) -> Itv:
    """A mathematical result as a value of type `t`: itself where it fits, else the whole type where the
    mode wraps (unsigned always, signed with bit-vectors); integer mode keeps a signed result as it is, up to
    `HUGE`."""
    if t.bounded and t.min <= r[0] and r[1] <= t.max:
        return r
    if t.bounded and (bitvector or not t.signed):
        if r[0] == r[1]:
            v = t.wrap(int(r[0]))
            return (v, v)
        return (t.min, t.max)
    return (-INF if r[0] < -HUGE else r[0], INF if r[1] > HUGE else r[1])


_BY_TYPE_RANGE = frozenset(("/", "%", "<<", ">>", "&", "|", "^"))    # signed operations encoded per type range


def _encoded_conversion(a: Itv, t: IntType, src: IntType) -> Itv:
    """What the integer encoding makes of a `src` value in `a` converted to `t` (`Encoder._wrap` with the
    source type's range): the value as it is where `src` fits in `t`; else, where `src` reaches at most one
    modulus past `t`, one shift by it on each side `src` reaches past; else an exact wrap. Exact for values of
    `src`; a value beyond `src` (signed overflow, which integers keep) may stay outside `t` -- cwalk's
    `(size_t)(p - q)` of two unbounded offsets is one of `t` all the same, as the proof needs."""
    m = 1 << t.bits
    if t.min <= src.min and src.max <= t.max:
        return a
    if not (t.min - m <= src.min and src.max <= t.max + m):
        return fit(a, t, True)
    parts = [x for x in (meet(a, (t.min, t.max)),) if x is not None]
    below, above = meet(a, (-INF, t.min - 1)), meet(a, (t.max + 1, INF))
    if below is not None:
        parts.append((below[0] + m, below[1] + m) if src.min < t.min else below)
    if above is not None:
        parts.append((above[0] - m, above[1] - m) if src.max > t.max else above)
    out = parts[0]
    for x in parts[1:]:
        out = hull(out, x)
    return out


def clip(r: Itv, t: IntType, bitvector: bool) -> Itv:
    """`r` cut to `t`'s range where the mode keeps every value of `t` in it (unsigned always, signed with
    bit-vectors): a widened bound goes to the type's end, not to infinity (an unsigned invariant without its
    upper bound lets z3's Int hold values no execution has, which no cast is exact on)."""
    if t.bounded and (bitvector or not t.signed):
        return (max(r[0], t.min), min(r[1], t.max))
    return r


def anything(t: IntType, bitvector: bool) -> Itv:
    """What an undefined operation (division by zero, a shift amount out of range) may give: z3 leaves it
    unconstrained with integers (any integer), a bit-vector stays in its type."""
    return type_range(t) if bitvector else TOP


def _mul(x: Bound, y: Bound) -> Bound:
    return 0 if x == 0 or y == 0 else x * y


def _tdiv(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y > 0) else -q


def lookup(state: Mapping[str, Value], v: Var) -> Value:
    t = v.type
    if isinstance(t, IntType):
        return state.get(v.name, type_range(t))
    if isinstance(t, BoolType):
        return state.get(v.name)
    return ARRAY


def put(state: State, v: Var, value: Value) -> None:
    """Bind `v` in `state` (in place), leaving out what says nothing (the whole type, an unknown boolean)."""
    t = v.type
    if isinstance(t, IntType):
        if value == type_range(t):          # a wider value (signed overflow with integers) is kept
            state.pop(v.name, None)
        else:
            state[v.name] = value
    elif isinstance(t, BoolType):
        if value is None:
            state.pop(v.name, None)
        else:
            state[v.name] = value


def join(a: State | None, b: State | None, types: Mapping[str, object]) -> State | None:
    """The least state above both (`types`: each variable's IR type, for what a state leaves out). The states
    at a merge mostly share their bindings: only those that differ are joined one by one (the set difference
    of the items runs in C; a loop over every binding made the analysis quadratic on long programs)."""
    if a is None:
        return None if b is None else dict(b)
    if b is None:
        return dict(a)
    out: State = dict(a)
    for k in {k for k, _ in a.items() ^ b.items()}:
        t = types[k]
        x, y = a.get(k), b.get(k)
        if isinstance(t, BoolType):
            if x is None or x != y:
                out.pop(k, None)
            continue
        r = hull(x if x is not None else type_range(t), y if y is not None else type_range(t))
        if r != type_range(t):
            out[k] = r
        else:
            out.pop(k, None)
    return out


class Semantics:
    """The abstract meaning of expressions in one mode (`bitvector` or integers)."""

    def __init__(self, bitvector: bool, types: Mapping[str, object]):
        self.bitvector = bitvector
        self.types = types          # variable name -> IR type (`join`)

    # ------------------------------------------------------------------ evaluation
    def eval(self, e: Expr, state: Mapping[str, Value], memo: dict[int, Value] | None = None) -> Value:
        """`e`'s abstract value in `state` (iterative, each shared sub-term once; `memo`, the values of
        sub-terms already evaluated in this same state, is extended)."""
        if isinstance(e, Var):
            return lookup(state, e)
        if memo is None:
            memo = {}
        elif id(e) in memo:
            return memo[id(e)]
        # lazily: an `ite` evaluates the branch its condition picks, `&&`/`||` stop at a deciding argument (a
        # dereference is a case split over the objects its pointer may reach, and mostly one case is possible)
        node = self._node
        stack: list[tuple[Expr, int]] = [(e, 0)]
        while stack:
            n, stage = stack.pop()
            i = id(n)
            if i in memo:
                continue
            cls = type(n)
            if cls is Var:
                memo[i] = lookup(state, n)
                continue
            if cls is Ite:
                c = memo.get(id(n.cond), _MISSING)
                if c is _MISSING:
                    stack.append((n, 0))
                    stack.append((n.cond, 0))
                    continue
                needed = (n.then,) if c is True else (n.orelse,) if c is False else (n.then, n.orelse)
                missing = [k for k in needed if id(k) not in memo]
                if missing:
                    stack.append((n, 0))
                    stack.extend((k, 0) for k in missing)
                    continue
                if c is True or c is False:
                    memo[i] = memo[id(needed[0])]
                else:
                    memo[i] = node(n, [c, memo[id(n.then)], memo[id(n.orelse)]], state)
                continue
            if cls is And or cls is Or:
                stop = cls is Or            # the value that decides
                args = n.args
                j = stage
                while j < len(args) and id(args[j]) in memo:
                    if memo[id(args[j])] is stop:
                        break
                    j += 1
                if j < len(args) and id(args[j]) not in memo:
                    stack.append((n, j))
                    stack.append((args[j], 0))
                    continue
                if j < len(args):
                    memo[i] = stop
                else:
                    memo[i] = node(n, [memo[id(a)] for a in args], state)
                continue
            if isinstance(n, _UNTRACKED):
                memo[i] = None if cls is ForAll else ARRAY
                continue
            kids = n.children()
            if kids and not stage:
                stack.append((n, 1))
                for k in kids:
                    if id(k) not in memo:
                        stack.append((k, 0))
                continue
            memo[i] = node(n, [memo[id(k)] for k in kids], state)
        return memo[id(e)]

    def _node(self, n: Expr, k: list, state: Mapping[str, Value]) -> Value:
        cls = type(n)
        if cls is Var:
            return lookup(state, n)
        if cls is IntConst:
            return (n.value, n.value)
        if cls is Binary:
            if self._beyond_the_encoding(n, (n.lhs, n.rhs), k):
                return TOP
            return self._binary(n, k[0], k[1])
        if cls is Compare:
            if n.lhs == n.rhs and isinstance(n.lhs, Var):
                return n.op in ("==", "<=", ">=")
            return compare(n.op, k[0], k[1])
        if cls is BoolConst:
            return n.value
        if cls is Not:
            return None if k[0] is None else not k[0]
        if cls is And:
            return False if False in k else True if all(x is True for x in k) else None
        if cls is Or:
            return True if True in k else False if all(x is False for x in k) else None
        if cls is Ite:
            c, a, b = k
            if c is True or c is False:
                return a if c else b
            if isinstance(n.type, IntType):
                return hull(a, b)
            if isinstance(n.type, BoolType):
                return a if a == b else None
            return ARRAY
        if cls is Select:
            t = n.type
            return type_range(t) if isinstance(t, IntType) else None if isinstance(t, BoolType) else ARRAY
        if cls is Cast:
            return self._cast(n.type, n.arg.type, k[0])
        if cls is Unary:
            if self._beyond_the_encoding(n, (n.arg,), k):
                return TOP
            return self._unary(n, k[0])
        raise TypeError(f"no abstract meaning for {type(n).__name__}")

    def _beyond_the_encoding(self, n: Expr, args: tuple[Expr, ...], values: list) -> bool:
        """Whether the integer encoding's term for `n` may be any value here: its operands may lie beyond their
        types (signed overflow keeps its value with integers), and the encoding wraps an unsigned result, and
        divides, shifts and masks, as cheaply as its operands' type ranges allow (`Encoder._wrap`,
        `_bitwise_identity`, `_divmod`), which is exact only on values of those types. (cwalk: a size_t sum
        of an offset difference beyond its type stayed above 2^64 in the encoding.)"""
        t = n.type
        if self.bitvector or not isinstance(t, IntType) or not t.bounded:
            return False
        if t.signed and not (isinstance(n, Binary) and n.op in _BY_TYPE_RANGE):
            return False
        return any(isinstance(x.type, IntType) and x.type.bounded and not (x.type.min <= v[0] and v[1] <= x.type.max)
                   for x, v in zip(args, values))

    def _cast(self, t, src, a: Value) -> Value:
        if isinstance(t, BoolType):
            if isinstance(src, BoolType):
                return a
            return False if a == (0, 0) else True if a[0] > 0 or a[1] < 0 else None
        if isinstance(src, BoolType):
            return (int(a), int(a)) if a is not None else (0, 1)
        if not t.bounded or (t.min <= a[0] and a[1] <= t.max):
            return a
        if self.bitvector or not src.bounded:
            return fit(a, t, True)         # a conversion wraps (the integer encoding's wrap is exact from ∞ types)
        return hull(_encoded_conversion(a, t, src), fit(a, t, True))   # the encoding's reading and C's

    def _unary(self, n: Unary, a: Itv) -> Itv:
        t = n.type
        if n.op == "-":
            return fit((-a[1], -a[0]), t, self.bitvector)
        if t.bounded and not t.signed:                  # ~a = max - a
            return (t.max - a[1], t.max - a[0])
        return (-a[1] - 1, -a[0] - 1)

    def _binary(self, n: Binary, a: Itv, b: Itv) -> Itv:
        op, t = n.op, n.type
        bv = self.bitvector
        if op == "+":
            return fit((a[0] + b[0], a[1] + b[1]), t, bv)
        if op == "-":
            return fit((a[0] - b[1], a[1] - b[0]), t, bv)
        if op == "*":
            ps = [_mul(x, y) for x in a for y in b]
            return fit((min(ps), max(ps)), t, bv)
        if op in ("/", "%"):
            if b[0] <= 0 <= b[1]:
                return anything(t, bv)
            if op == "%":
                m = max(abs(b[0]), abs(b[1])) - 1           # |a % b| < |b|, the sign is the dividend's
                lo = 0 if a[0] >= 0 else max(a[0], -m)
                hi = 0 if a[1] <= 0 else min(a[1], m)
                return (lo, hi)
            if INF in (abs(a[0]), abs(a[1]), abs(b[0]), abs(b[1])):
                return fit(TOP, t, bv)
            qs = [_tdiv(x, y) for x in a for y in b]      # monotone in each argument where b keeps its sign
            return fit((min(qs), max(qs)), t, bv)
        if op in ("&", "|", "^"):
            a, b = fit(a, t, True), fit(b, t, True)     # on the type's bit patterns, in both modes
        if op == "&":
            if a[0] >= 0 and b[0] >= 0:
                return (0, min(a[1], b[1]))
            if a[0] >= 0 or b[0] >= 0:
                return (0, a[1] if a[0] >= 0 else b[1])
            return type_range(t)
        if op in ("|", "^"):
            if a[0] >= 0 and b[0] >= 0 and a[1] < INF and b[1] < INF:
                top = (1 << max(int(a[1]), int(b[1])).bit_length()) - 1
                return (max(a[0], b[0]) if op == "|" else 0, top)
            return type_range(t)
        if op in ("<<", ">>"):
            amount = b[0] if b[0] == b[1] and t.bounded and 0 <= b[0] < t.bits else None
            if op == ">>":
                if amount is not None:
                    return (_shr(a[0], amount), _shr(a[1], amount))
                return (min(a[0], 0), max(a[1], 0))     # every amount moves a value toward 0 or -1
            if amount is not None:
                p = 1 << int(amount)
                return fit((a[0] * p, a[1] * p), t, bv)
            return anything(t, bv) if t.signed else type_range(t)
        raise TypeError(op)

    # ------------------------------------------------------------------ refinement
    def refine(self, state: State, cond: Expr, positive: bool = True, memo: dict[int, Value] | None = None
               ) -> State | None:
        """`state` restricted to where `cond` evaluates to `positive` (None if nowhere; `state` itself when
        `cond` is `positive` all over it, else a new state). `memo`: sub-term values in `state` (kept as is)."""
        memo = {} if memo is None else memo
        v = self.eval(cond, state, memo)
        if v is not None:
            return state if v == positive else None
        out = dict(state)
        return out if self._refine(out, cond, positive, [memo]) else None

    def _refine(self, s: State, c: Expr, pos: bool, memo: list[dict[int, Value]]) -> bool:
        """Restrict `s` in place; False when `c` cannot be `pos` in it. `memo[0]` holds sub-term values in `s`
        as it is; a narrowing replaces it with a fresh one (the old one may be shared with other cases)."""
        if isinstance(c, BoolConst):
            return c.value == pos
        if isinstance(c, Not):
            return self._refine(s, c.arg, not pos, memo)
        if isinstance(c, (And, Or)):
            if isinstance(c, And) == pos:                 # all of them hold (or all fail)
                return all(self._refine(s, a, pos, memo) for a in c.args)
            open_ = [a for a in c.args if self.eval(a, s, memo[0]) is not (not pos)]
            if not open_:
                return False
            if len(open_) > MAX_CASES:
                return True
            reached = [p for p in (self.refine(s, a, pos, memo[0]) for a in open_) if p is not None]
            if not reached:
                return False
            if any(p is s for p in reached):
                return True                 # one case holds all over s: nothing to narrow
            joined = reached[0]
            for p in reached[1:]:
                joined = join(joined, p, self.types)
            if joined != s:
                s.clear()
                s.update(joined)
                memo[0] = {}
            return True
        if isinstance(c, Var) and isinstance(c.type, BoolType):
            now = s.get(c.name)
            if now is not None and now != pos:
                return False
            if now is None:
                s[c.name] = pos
                memo[0] = {}
            return True
        if isinstance(c, Compare) and isinstance(c.lhs.type, IntType):
            if c.lhs == c.rhs and isinstance(c.lhs, Var):
                return (c.op in ("==", "<=", ">=")) == pos
            op = c.op if pos else NEGATED[c.op]
            a, b = self.eval(c.lhs, s, memo[0]), self.eval(c.rhs, s, memo[0])
            if compare(op, a, b) is False:
                return False
            na, nb = restrict(op, a, b)
            if na is None or nb is None:
                return False
            if na == a and nb == b:
                return True
            memo[0] = {}
            return self._narrow(s, c.lhs, na) and self._narrow(s, c.rhs, nb)
        v = self.eval(c, s, memo[0])
        return v is None or v == pos

    def _narrow(self, s: State, e: Expr, itv: Itv) -> bool:
        """Record that `e`, a variable (or a value-preserving cast of one), lies in `itv`."""
        while isinstance(e, Cast) and isinstance(e.arg.type, IntType) and isinstance(e.type, IntType):
            inner = self.eval(e.arg, s)
            if not (e.type.contains(inner[0]) and e.type.contains(inner[1])) and e.type.bounded:
                return True
            e = e.arg
        if isinstance(e, Var):
            now = lookup(s, e)
            m = meet(now, itv)
            if m is None:
                return False
            put(s, e, m)
        return True


NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


def _shr(x: Bound, k: int) -> Bound:
    return x if x in (INF, -INF) else int(x) >> k


def compare(op: str, a: Value, b: Value) -> AbsBool:
    """The abstract truth of `a op b` (numbers compare mathematically: each mode's order on a type's values)."""
    if not isinstance(a, tuple) or not isinstance(b, tuple):
        if a is None or b is None or a == ARRAY or b == ARRAY:
            return None
        return (a == b) if op == "==" else (a != b) if op == "!=" else None
    if op == "<":
        return True if a[1] < b[0] else False if a[0] >= b[1] else None
    if op == "<=":
        return True if a[1] <= b[0] else False if a[0] > b[1] else None
    if op == ">":
        return compare("<", b, a)
    if op == ">=":
        return compare("<=", b, a)
    if op == "==":
        if a[0] == a[1] == b[0] == b[1]:
            return True
        return False if a[1] < b[0] or b[1] < a[0] else None
    if op == "!=":
        r = compare("==", a, b)
        return None if r is None else not r
    raise TypeError(op)


def restrict(op: str, a: Itv, b: Itv) -> tuple[Itv | None, Itv | None]:
    """The parts of `a` and of `b` that can satisfy `a op b`."""
    if op == "<":
        return meet(a, (-INF, b[1] - 1)), meet(b, (a[0] + 1, INF))
    if op == "<=":
        return meet(a, (-INF, b[1])), meet(b, (a[0], INF))
    if op == ">":
        nb, na = restrict("<", b, a)
        return na, nb
    if op == ">=":
        nb, na = restrict("<=", b, a)
        return na, nb
    if op == "==":
        m = meet(a, b)
        return m, m
    # !=: only an end equal to a single value moves
    return _punch(a, b), _punch(b, a)


def _punch(a: Itv, b: Itv) -> Itv | None:
    if b[0] != b[1]:
        return a
    v = b[0]
    lo, hi = a
    if lo == v:
        lo += 1
    if hi == v:
        hi -= 1
    return (lo, hi) if lo <= hi else None

