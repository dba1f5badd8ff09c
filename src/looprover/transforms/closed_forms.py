"""Closed forms of loop variables after k iterations, for both accelerating transforms.

* LABMC's abstract acceleration (`transforms/labmc.py`, over-approximating): syntactic update forms per
  variable over any path, exact modulo 2^w (below, up to "exact closed forms of a loop path").
* Under-approximating acceleration (`transforms/accelerate.py`): exact forms of one path's updates in
  mathematical arithmetic, proposed syntactically or by fitting a polynomial, accepted by an inductive check
  (`MathForm` and after). The expression helpers (`add`, `sub`, `mul`, ...) serve both.

LABMC's forms:

A syntactic dataflow over one iteration (header H to a back edge) computes, per candidate variable x, the set
of *update forms* an iteration can apply, relative to x0 (x's value when the iteration starts):

  Keep             x = x0
  Offset(b)        x = x0 + b      (b loop-invariant; arithmetic modulo 2^w for a w-bit x)
  Reset(g)         x = g           (g loop-invariant: constants and variables no body edge writes)

Anything else (products, x read in a non-additive position, another written variable on the right, havoc) is
TOP. A union of more than `MAX_FORMS` forms is TOP, which also makes the fixpoint over inner-loop cycles
finite.

Summaries after k iterations (k shared by all variables of the loop within one abstract iteration, so
relations such as i - j = const survive):

  * all forms Keep/Offset with one increment b:   x = x0 + k*b                         ("exact")
  * several increments b_1..b_m:                 x = x0 + sum k_i*b_i,  sum k_i = k
    where, if the body is acyclic with few paths, k_i counts the iterations along a *path class* (paths
    with the same increments of all such variables) and is shared by all of them (so x + y = i survives
    `if (*) x++; else y++; i++`); otherwise the k_i are fresh per variable
  * with resets g_1..g_s:                        x = x0 + sum k_i*b_i  or  x = g_j + sum k'_i*b_i
  * resets only (all b = 0):                     x in {x0, g_1, ..., g_s}

Why the modular arithmetic is exact. Repeated addition of b to a w-bit value is x0 + k*b modulo 2^w, and that
only depends on k modulo 2^w. So a counter of an unsigned type of the largest width in use stands for the true
iteration count K (k = K mod 2^w_k), and every constraint we add holds modulo 2^w_k (`sum k_i = k` as wrapping
unsigned addition). Each closed form is computed in the *unsigned* type of x's width and converted back:
    x := (T)((U)x0 + (U)k * (U)b)
In bit-vector mode this is exactly gcc's wrap-around for signed and unsigned x. In integer mode it is exact
for unsigned x, and for signed x on every execution without signed overflow (the only executions that mode
is exact on): then the true value lies in T's range and equals its residue. A right-hand side matches
`x + b` only if every operation on the way has a width >= w (so it is congruent modulo 2^w); narrowing casts
in between (e.g. `(short)((char)x + 1)`) make the variable TOP. Mathematical-integer variables (CHC inputs)
use a separate unbounded counter `km >= 0` linked to k.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import gcd

from looprover.linalg import solve_exact
from looprover.program.cfa import Assign, Edge, Havoc
from looprover.program.expr import (
    BOOL, Binary, BoolType, Cast, Compare, Expr, IntConst, IntType, Unary, Var, cast, const, free_vars, ite,
    substitute,
)
from looprover.program.loops import Loop

MAX_FORMS = 4
MAX_PATHS = 32


@dataclass(frozen=True)
class Offset:
    beta: Expr       # in x's type; Offset(0) is Keep


@dataclass(frozen=True)
class Reset:
    gamma: Expr      # in x's type


Form = Offset | Reset
TOP = None


def unsigned_of(t: IntType) -> IntType:
    return IntType(t.bits, False)


def is_zero(e: Expr) -> bool:
    return isinstance(e, IntConst) and e.value == 0


def add(a: Expr, b: Expr) -> Expr:
    """a + b in a's type, folded; both are of the same IntType."""
    t = a.type
    if is_zero(a):
        return b
    if is_zero(b):
        return a
    if isinstance(a, IntConst) and isinstance(b, IntConst):
        return const(a.value + b.value, t)
    return Binary("+", a, b, t)


def sub(a: Expr, b: Expr) -> Expr:
    t = a.type
    if is_zero(b):
        return a
    if isinstance(a, IntConst) and isinstance(b, IntConst):
        return const(a.value - b.value, t)
    if is_zero(a):
        return neg(b)
    return Binary("-", a, b, t)


def neg(a: Expr) -> Expr:
    if isinstance(a, IntConst):
        return const(-a.value, a.type)
    return Unary("-", a, a.type)


def mul(a: Expr, b: Expr) -> Expr:
    t = a.type
    if is_zero(a) or is_zero(b):
        return const(0, t)
    if isinstance(b, IntConst) and b.value == 1:
        return a
    if isinstance(a, IntConst) and a.value == 1:
        return b
    if isinstance(a, IntConst) and isinstance(b, IntConst):
        return const(a.value * b.value, t)
    return Binary("*", a, b, t)


def _width_ok(t, x_type: IntType) -> bool:
    """Is an operation in type t congruent modulo 2^w(x) (exact for mathematical x)?"""
    if not isinstance(t, IntType):
        return False
    if x_type.bits is None:
        return t.bits is None
    return t.bits is None or t.bits >= x_type.bits


def offset_of(e: Expr, x: Var) -> Expr | None:
    """b (of x's type, x-free) with e = x + b modulo 2^w(x), or None. e must have x's type."""
    r = _lin(e, x)
    if r is None or r[0] != 1:
        return None
    return r[1]


def _lin(e: Expr, x: Var) -> tuple[int, Expr] | None:
    """(c, r) with e = c*x + r (mod 2^w(x)), c in {0, 1}, r x-free, expressed in x's type."""
    xt: IntType = x.type
    if e == x:
        return 1, const(0, xt)
    if x not in free_vars(e):
        if not isinstance(e.type, IntType):
            return None
        return 0, cast(xt, e)    # its value, reduced modulo 2^w(x) (value-preserving for mathematical x)
    if isinstance(e, Binary) and e.op in ("+", "-") and _width_ok(e.type, xt):
        a, b = _lin(e.lhs, x), _lin(e.rhs, x)
        if a is None or b is None:
            return None
        if e.op == "+":
            c = a[0] + b[0]
            if c > 1:
                return None
            return c, add(a[1], b[1])
        if b[0] != 0:
            return None
        return a[0], sub(a[1], b[1])
    if isinstance(e, Cast) and _width_ok(e.type, xt) and isinstance(e.arg.type, IntType):
        if e.arg == x:
            return 1, const(0, xt)
        if _width_ok(e.arg.type, xt):
            return _lin(e.arg, x)
    return None


# ----------------------------------------------------------------------------------- the dataflow
class FormAnalysis:
    """Per-variable update forms of one iteration of `loop`, for the candidate variables `cands`."""

    def __init__(self, loop: Loop, cands: frozenset[Var], written: frozenset[Var]):
        self.loop = loop
        self.cands = cands
        self.written = written
        self.forms: dict[Var, frozenset[Form] | None] = {}

    def invariant(self, e: Expr) -> bool:
        return not (free_vars(e) & self.written)

    def _join(self, a: frozenset | None, b: frozenset | None) -> frozenset | None:
        if a is TOP or b is TOP:
            return TOP
        u = a | b
        return TOP if len(u) > MAX_FORMS else u

    def _transfer(self, edge: Edge, state: dict[Var, frozenset | None]) -> dict[Var, frozenset | None]:
        st = dict(state)
        for s in edge.stmts:
            if isinstance(s, Havoc):
                for v in s.vars:
                    if v in st:
                        st[v] = TOP
            elif isinstance(s, Assign) and s.lhs in st:
                x, e = s.lhs, s.rhs
                cur = st[x]
                if cur is TOP:
                    continue
                if isinstance(x.type, IntType):
                    b = offset_of(e, x)
                    if b is not None and self.invariant(b):
                        new = set()
                        for f in cur:
                            new.add(Offset(add(f.beta, b)) if isinstance(f, Offset) else Reset(add(f.gamma, b)))
                        st[x] = frozenset(new)
                        continue
                if x not in free_vars(e) and self.invariant(e):
                    st[x] = frozenset({Reset(e)})
                else:
                    st[x] = TOP
        return st

    def run(self) -> dict[Var, frozenset[Form] | None]:
        loop, h = self.loop, self.loop.header
        keep = {x: frozenset({Offset(const(0, x.type)) if isinstance(x.type, IntType) else Reset(x)})
                for x in self.cands}
        # Keep for a Boolean is represented as Reset(x) (x = x0), which `summary` treats as "unchanged".
        states: dict[int, dict[Var, frozenset | None]] = {h: keep}
        end: dict[Var, frozenset | None] | None = None
        outs: dict[int, list[Edge]] = {}
        for e in loop.body_edges:
            outs.setdefault(e.src, []).append(e)
        work = [h]
        while work:
            l = work.pop()
            st = states[l]
            for e in outs.get(l, []):
                new = self._transfer(e, st)
                if e.dst == h:
                    end = new if end is None else {x: self._join(end[x], new[x]) for x in self.cands}
                    continue
                old = states.get(e.dst)
                merged = new if old is None else {x: self._join(old[x], new[x]) for x in self.cands}
                if merged != old:
                    states[e.dst] = merged
                    work.append(e.dst)
        self.forms = end if end is not None else {x: frozenset() for x in self.cands}
        return self.forms

    def paths(self, limit: int = MAX_PATHS) -> list[dict[Var, frozenset | None]] | None:
        """The forms of each iteration path (header to a back edge), or None when the body has a cycle
        (inner loop) or more than `limit` paths. Used to share one count per path among all variables."""
        loop, h = self.loop, self.loop.header
        outs: dict[int, list[Edge]] = {}
        for e in loop.body_edges:
            outs.setdefault(e.src, []).append(e)
        keep = {x: frozenset({Offset(const(0, x.type)) if isinstance(x.type, IntType) else Reset(x)})
                for x in self.cands}
        done: list[dict[Var, frozenset | None]] = []
        stack: list[tuple[int, dict, frozenset]] = [(h, keep, frozenset({h}))]
        work = 0
        while stack:
            l, st, on_path = stack.pop()
            work += 1
            if work > 50 * limit:
                return None
            for e in outs.get(l, []):
                new = self._transfer(e, st)
                if e.dst == h:
                    done.append(new)
                    if len(done) > limit:
                        return None
                elif e.dst in on_path:
                    return None
                else:
                    stack.append((e.dst, new, on_path | {e.dst}))
        return done


# ----------------------------------------------------------------------------------- summaries
@dataclass
class Summary:
    """How to update x over k skipped iterations."""
    var: Var
    offsets: tuple[Expr, ...]     # distinct increments (0 included when some path keeps x)
    resets: tuple[Expr, ...]      # reset values

    @property
    def exact(self) -> bool:
        return not self.resets and len(self.offsets) == 1

    @property
    def unchanged(self) -> bool:
        """No iteration that returns to the header changes x."""
        return not self.resets and all(is_zero(b) for b in self.offsets)

    @property
    def kind(self) -> str:
        if self.unchanged:
            return "keep"
        if self.exact:
            return "keep" if is_zero(self.offsets[0]) else "linear"
        if not self.resets:
            return "multi-path"
        if all(is_zero(b) for b in self.offsets):
            return "non-recurrent"
        return "reset"


def summarize(x: Var, forms: frozenset[Form] | None) -> Summary | None:
    """A summary for x, or None (havoc). A variable no iteration returns from (no back edge reached) keeps
    its value across skipped iterations: there are none."""
    if forms is TOP:
        return None
    if isinstance(x.type, BoolType) or x.type == BOOL:
        resets = tuple(sorted({f.gamma for f in forms if isinstance(f, Reset) and f.gamma != x}, key=str))
        return Summary(x, (), resets) if resets else Summary(x, (), ())
    if not isinstance(x.type, IntType) or (x.type.bits is not None and x.type.bits > 64):
        return None
    offsets = tuple(sorted({f.beta for f in forms if isinstance(f, Offset)}, key=str))
    resets = tuple(sorted({f.gamma for f in forms if isinstance(f, Reset)}, key=str))
    if not offsets and not resets:
        offsets = (const(0, x.type),)
    return Summary(x, offsets, resets)


def closed_form(x: Var, beta: Expr, k: Expr, base: Expr | None = None) -> Expr:
    """base + k*beta computed modulo 2^w in x's width, as a value of x's type (`base` defaults to x)."""
    base = x if base is None else base
    t: IntType = x.type
    if is_zero(beta):
        return base
    if t.bits is None:
        return add(base, mul(k, beta))
    u = unsigned_of(t)
    kk = cast(u, k)
    r = add(cast(u, base), mul(kk, cast(u, beta)) if not isinstance(beta, IntConst)
            else mul(kk, const(beta.value, u)))
    return cast(t, r)


# ======================================================================= exact closed forms of a loop path
# Under-approximating acceleration (`transforms/accelerate.py`) runs one path of a loop body n times in one
# step. Its accelerated branch is only taken when no iteration overflows, wraps or divides by zero, so there
# the path's updates are mathematical: the path's expressions are restated over a wide signed type WIDE with
# every C variable read as `(WIDE)x` (`accelerate.mathify`), and a closed form is a value in WIDE. Forms are
# *proposed* (syntactically, or by fitting a polynomial to sample runs) and only *accepted* after the
# inductive check (`check_inductive`), so a wrong proposal costs an acceleration, never soundness.

@dataclass(frozen=True)
class MathForm:
    """x after `count` iterations = numerator / denominator (an exact division), where `numerator` is a WIDE
    expression over `(WIDE)v` for the values v had before the iterations and over the variable `count`."""
    var: Var
    numerator: Expr
    denominator: int
    kind: str                 # offset | alternating | polynomial

    def at(self, count: Var, value: Expr) -> Expr:
        """The form after `value` iterations (a WIDE expression)."""
        num = substitute(self.numerator, {count: value})
        if self.denominator == 1:
            return num
        return Binary("/", num, const(self.denominator, num.type), num.type)


def occurrence(e: Expr) -> Var | None:
    """The variable v if `e` is `(WIDE)v` (how a mathified expression reads a C variable), else None."""
    if isinstance(e, Cast) and isinstance(e.arg, Var) and isinstance(e.arg.type, IntType):
        return e.arg
    return None


def linear_in(e: Expr, k: Var) -> tuple[Expr, Expr] | None:
    """(b, r) with e = k*b + r exactly (WIDE arithmetic), b and r not reading k; or None. k occurs as itself
    or, for a C variable, as `(WIDE)k`. b is a constant for `x += c` (1) and `x = c - x` (-1), and may be
    symbolic for guards such as `x0 + k*(h + m) < N`."""
    if e == k or occurrence(e) == k:
        return const(1, e.type), const(0, e.type)
    if k not in free_vars(e):
        return const(0, e.type), e
    if isinstance(e, Binary) and e.op in ("+", "-"):
        a, b = linear_in(e.lhs, k), linear_in(e.rhs, k)
        if a is None or b is None:
            return None
        f = add if e.op == "+" else sub
        return f(a[0], b[0]), f(a[1], b[1])
    if isinstance(e, Binary) and e.op == "*":
        for x, o in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
            if k not in free_vars(x):
                r = linear_in(o, k)
                return None if r is None else (mul(x, r[0]), mul(x, r[1]))
        return None
    if isinstance(e, Unary) and e.op == "-":
        r = linear_in(e.arg, k)
        return None if r is None else (neg(r[0]), neg(r[1]))
    return None


def syntactic_form(x: Var, update: Expr, count: Var, invariant) -> MathForm | None:
    """`x := x + c` gives x0 + n*c; `x := c - x` gives x0 for even n and c - x0 for odd n (c loop-invariant:
    `invariant(c)`). Other multipliers k have no polynomial form (k^n)."""
    r = linear_in(update, x)
    if r is None or not isinstance(r[0], IntConst) or not invariant(r[1]):
        return None
    k, c_ = r[0].value, r[1]
    x0 = cast(update.type, x)
    if k == 1:
        return MathForm(x, add(x0, mul(count, c_)), 1, "offset")
    if k == -1:
        even = Compare("==", Binary("%", count, const(2, count.type), count.type), const(0, count.type))
        return MathForm(x, ite(even, x0, sub(c_, x0)), 1, "alternating")
    return None


# --------------------------------------------------------------------------- fitting a polynomial to runs
Monomial = tuple[Var | None, int]      # (v0 or None for 1, power of n): v0, v0*n, 1, n, n^2


def template(vs: list[Var], degree: int = 2) -> list[Monomial]:
    """x(n) = sum_v (a_v*v0 + b_v*v0*n) + c_2*n^2 + c_1*n + c_0 (the paper's template; degree <= 2)."""
    out: list[Monomial] = []
    for v in vs:
        out += [(v, 0), (v, 1)]
    out += [(None, p) for p in range(degree + 1)]
    return out


def fit(x: Var, monomials: list[Monomial], samples: list[tuple[dict[Var, int], int, int]], count: Var,
        wide: IntType) -> MathForm | None:
    """The template polynomial through every sample (x0 values, n, x(n)), as a MathForm; None if no
    polynomial of the template fits them all. Coefficients are exact rationals; the form is their common
    denominator D over an integer numerator."""
    rows, rhs = [], []
    for vals, n, value in samples:
        rows.append([Fraction(vals[v] if v is not None else 1) * n ** p for v, p in monomials])
        rhs.append(Fraction(value))
    sol = solve_exact(rows, rhs)
    if sol is None:
        return None
    den = 1
    for c_ in sol:
        den = den * c_.denominator // gcd(den, c_.denominator)
    num: Expr = const(0, wide)
    for (v, p), c_ in zip(monomials, sol):
        if c_ == 0:
            continue
        term: Expr = const(int(c_ * den), wide)
        if v is not None:
            term = mul(term, cast(wide, v))
        for _ in range(p):
            term = mul(term, count)
        num = add(num, term)
    return MathForm(x, num, den, "polynomial")


# --------------------------------------------------------------------------- the inductive check
def check_inductive(forms: list[MathForm], updates: dict[Var, Expr], premise: list[Expr], count: Var,
                    timeout_ms: int) -> list[Var]:
    """The variables whose form fails `x = p(x0, 0)` or `x = p(x0,k) ∧ π ⇒ x' = p(x0,k+1)` (valid for all
    k >= 0, for all forms jointly as the hypothesis). `updates[x]` is x's value after one run of the path
    and `premise` its condition (path condition and no-overflow guard), both over the state at k; an empty
    list means every form is exact on every run of the path. Solver trouble counts as failure."""
    from looprover.smt.encode import Encoder   # the closed forms of LABMC need no solver: import on use
    import z3

    from looprover.smt.solver import check_unpaused

    enc = Encoder(None, bitvector=False)
    names: set[Var] = set()
    for e in [f.numerator for f in forms] + list(updates.values()) + premise:
        names |= free_vars(e)
    env0: dict[str, object] = {v.name: enc.const(v.name + "!0", v.type) for v in names if v != count}
    k = enc.const("k!", count.type)
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    for v in names:
        if v != count:
            s.add(*enc.in_range(env0[v.name], v.type))
    s.add(k >= 0)
    envk = dict(env0)
    for f in forms:
        xk = enc.const(f.var.name + "!k", f.var.type)
        envk[f.var.name] = xk
        s.add(*enc.in_range(xk, f.var.type))
        s.add(f.denominator * xk == enc.expr(f.numerator, {**env0, count.name: k}))
    for c_ in premise:
        s.add(enc.expr(c_, envk))
    failed: list[Var] = []
    for f in forms:
        x0 = env0[f.var.name]
        base = f.denominator * x0 == enc.expr(f.numerator, {**env0, count.name: enc.value(0, count.type)})
        step = (f.denominator * enc.expr(updates[f.var], envk)
                == enc.expr(f.numerator, {**env0, count.name: k + 1}))
        for goal in (base, step):
            s.push()
            s.add(z3.Not(goal))
            r = check_unpaused(s)
            s.pop()
            if r != z3.unsat:
                failed.append(f.var)
                break
    return failed
