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
Bound = int | float                   # an integer, or -inf / inf
Itv = tuple[Bound, Bound]
AbsBool = bool | None                 # None: either
Value = Itv | AbsBool
State = dict[str, Value]
TOP: Itv = (-INF, INF)
ARRAY = "array"                       # the abstract value of an array expression: not tracked


def type_range(t: IntType) -> Itv:
    return (t.min, t.max) if t.bounded else TOP


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
    def eval(self, e: Expr, state: Mapping[str, Value]) -> Value:
        """`e`'s abstract value in `state` (iterative, each shared sub-term once)."""
        memo: dict[int, Value] = {}
        stack: list[tuple[Expr, bool]] = [(e, False)]
        while stack:
            n, ready = stack.pop()
            if id(n) in memo:
                continue
            if isinstance(n, (ForAll, ArrayFill, Store, ConstArray)):
                memo[id(n)] = None if isinstance(n, ForAll) else ARRAY
                continue
            kids = n.children()
            if kids and not ready:
                stack.append((n, True))
                stack.extend((k, False) for k in kids if id(k) not in memo)
                continue
            memo[id(n)] = self._node(n, [memo[id(k)] for k in kids], state)
        return memo[id(e)]

    def _node(self, n: Expr, k: list, state: Mapping[str, Value]) -> Value:
        if isinstance(n, Var):
            return lookup(state, n)
        if isinstance(n, IntConst):
            return (n.value, n.value)
        if isinstance(n, BoolConst):
            return n.value
        if isinstance(n, Not):
            return None if k[0] is None else not k[0]
        if isinstance(n, And):
            return False if any(x is False for x in k) else True if all(x is True for x in k) else None
        if isinstance(n, Or):
            return True if any(x is True for x in k) else False if all(x is False for x in k) else None
        if isinstance(n, Compare):
            return compare(n.op, k[0], k[1])
        if isinstance(n, Ite):
            c, a, b = k
            if c is True or c is False:
                return a if c else b
            if isinstance(n.type, IntType):
                return hull(a, b)
            if isinstance(n.type, BoolType):
                return a if a == b else None
            return ARRAY
        if isinstance(n, Select):
            t = n.type
            return type_range(t) if isinstance(t, IntType) else None if isinstance(t, BoolType) else ARRAY
        if isinstance(n, Cast):
            return self._cast(n.type, n.arg.type, k[0])
        if isinstance(n, Unary):
            return self._unary(n, k[0])
        if isinstance(n, Binary):
            return self._binary(n, k[0], k[1])
        raise TypeError(f"no abstract meaning for {type(n).__name__}")

    def _cast(self, t, src, a: Value) -> Value:
        if isinstance(t, BoolType):
            if isinstance(src, BoolType):
                return a
            return False if a == (0, 0) else True if a[0] > 0 or a[1] < 0 else None
        if isinstance(src, BoolType):
            return (int(a), int(a)) if a is not None else (0, 1)
        if not t.bounded or (t.min <= a[0] and a[1] <= t.max):
            return a
        return fit(a, t, True)         # a conversion wraps in both modes

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
    def refine(self, state: State, cond: Expr, positive: bool = True) -> State | None:
        """`state` restricted to where `cond` evaluates to `positive` (a new state; None if nowhere)."""
        out = dict(state)
        return out if self._refine(out, cond, positive) else None

    def _refine(self, s: State, c: Expr, pos: bool) -> bool:
        """Restrict `s` in place; False when `c` cannot be `pos` in it."""
        if isinstance(c, BoolConst):
            return c.value == pos
        if isinstance(c, Not):
            return self._refine(s, c.arg, not pos)
        if isinstance(c, (And, Or)):
            if isinstance(c, And) == pos:                 # all of them hold (or all fail)
                return all(self._refine(s, a, pos) for a in c.args)
            parts = [self.refine(s, a, pos) for a in c.args]
            reached = [p for p in parts if p is not None]
            if not reached:
                return False
            joined = reached[0]
            for p in reached[1:]:
                joined = join(joined, p, self.types)
            s.clear()
            s.update(joined)
            return True
        if isinstance(c, Var) and isinstance(c.type, BoolType):
            now = s.get(c.name)
            if now is not None and now != pos:
                return False
            s[c.name] = pos
            return True
        if isinstance(c, Compare) and isinstance(c.lhs.type, IntType):
            op = c.op if pos else NEGATED[c.op]
            a, b = self.eval(c.lhs, s), self.eval(c.rhs, s)
            if compare(op, a, b) is False:
                return False
            na, nb = restrict(op, a, b)
            if na is None or nb is None:
                return False
            return self._narrow(s, c.lhs, na) and self._narrow(s, c.rhs, nb)
        v = self.eval(c, s)
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

