"""IR -> z3: expressions, and SSA encoding of loop-free DAGs of CFA edges.

Two semantics (`bitvector=False` is the default):

* integer mode: every C integer is a z3 Int. Unsigned arithmetic wraps explicitly modulo 2^w; signed
  arithmetic keeps the mathematical value (signed overflow is undefined, so the encoding only has to be exact
  on executions without it: that is the guarantee of a TRUE in this mode); casts wrap like `IntType.wrap`;
  `/` and `%` truncate like C (z3's div/mod are Euclidean, so signs are fixed up); bitwise operators use
  exact arithmetic identities where they exist (masks `2^k-1` as `mod`, constant shifts as `*`/`div`,
  other shifts as a case split over the w amounts) and an `int2bv`/`bv2int` round trip otherwise. Fresh values (havoc, initial state) get range constraints; array
  reads of bounded element types are normalised with the exact wrap, because a havocked array is an
  unconstrained Int->Int map.
* bit-vector mode: each bounded type is a bit-vector of its width (two's complement, signed overflow wraps,
  as gcc does); mathematical integers (`MATH_INT`) stay Int.

DAG encoding (`Encoder.encode_dag`): each node gets a reachability guard, each edge a `taken` condition, and
values are merged at joins with `If(taken_1, v_1, If(taken_2, v_2, ...))`. Branching on *terms* is what keeps
z3 fast (stack.md: 0.03 s vs 21 s against `If(c, And(x1==..), And(..))`). Nodes with several out-edges that are
not syntactically exclusive (`assume c` / `assume !c`) get fresh choice booleans, so that at most one path is
active in a model: otherwise a merge would silently prefer one of two enabled nondeterministic branches and
lose the executions of the other (a wrong TRUE). Uniqueness also makes trace extraction a simple walk.

Constants stay Python values in SSA environments and are evaluated with the interpreter's `Evaluator`
(`Encoder.value_of`); node guards can be named to stop z3 from flattening guard chains (`encode_dag`);
`Encoder.logic` picks the z3 logic. All terms live in z3's main context.

`CPGSystem` (`smt.cpg_system`) builds the cutpoint graph's transition system on top of this.
"""
from __future__ import annotations

from collections import ChainMap
from dataclasses import dataclass, field
from typing import Callable, Hashable, Iterable, Mapping, Sequence

import z3

from looprover.errors import UnsupportedError
from looprover.program.cfa import Assert, Assign, Assume, Edge, Havoc, Program
from looprover.program.expr import (
    And, ArrayType, Binary, BoolConst, BoolType, Cast, Compare, ConstArray, Expr, IntConst, IntType, Ite, Not,
    Or, Select, Store, Type, Unary, Var, not_, walk,
)
from looprover.program.interp import Evaluator, UndefinedBehavior
from looprover.smt.solver import Solver, check_deadline
from looprover.smt.terms import FALSE, TRUE, is_false, is_val, mk_and, mk_ite, mk_not, mk_or


# ------------------------------------------------------------------------------------------ helpers
def _complementary(c: Expr, d: Expr) -> bool:
    """Syntactically exclusive and exhaustive branch conditions."""
    if c == not_(d) or d == not_(c):
        return True
    if isinstance(c, Compare) and isinstance(d, Compare) and c.lhs == d.lhs and c.rhs == d.rhs:
        return {c.op, d.op} in ({"<", ">="}, {"<=", ">"}, {"==", "!="})
    return False


def _srange(e: Expr) -> tuple[int, int] | None:
    """Static value range: constants, and the type range of any bounded expression (exact for unsigned;
    for signed it holds on executions without signed overflow, the only ones integer mode is exact on)."""
    if isinstance(e, IntConst):
        return (e.value, e.value)
    t = e.type
    if isinstance(t, IntType) and t.bounded:
        return (t.min, t.max)
    if isinstance(t, BoolType):
        return (0, 1)
    return None


# ------------------------------------------------------------------------------------------ DAG data
@dataclass
class EdgeEnc:
    """One CFA edge inside an encoded DAG: `taken` = source reached, edge chosen, all its assumes/asserts hold.

    Values in `env`/`written` are z3 terms or Python constants (folded); `Encoder.term(v, type)` converts.
    """
    node: Hashable
    edge: Edge
    dst: Hashable
    taken: z3.BoolRef
    env: Mapping[str, z3.ExprRef]                 # values after the edge (all variables)
    written: dict[str, z3.ExprRef]                # values of the variables the edge wrote
    havocs: list[tuple[Var, z3.ExprRef]]          # fresh constants of its Havoc statements, in order
    cells: list[tuple[str, z3.ExprRef, z3.ExprRef]] = field(default_factory=list)  # array writes (name, i, v)


@dataclass
class Violation:
    """Assertion `stmt` (index `index` in `edge`) fails: `cond` = reached and the condition is false."""
    node: Hashable
    edge: Edge
    index: int
    stmt: Assert
    cond: z3.BoolRef
    env: Mapping[str, z3.ExprRef]
    written: dict[str, z3.ExprRef]
    havocs: list[tuple[Var, z3.ExprRef]]
    cells: list[tuple[str, z3.ExprRef, z3.ExprRef]] = field(default_factory=list)


@dataclass
class DagSpec:
    """A DAG of CFA edges over arbitrary hashable nodes (a fragment, or a BMC unrolling).

    `order` is topological with `entry` first; `succ[n]` lists (edge, successor) pairs; nodes without `succ`
    entries are sinks. `want_env` are the sinks whose merged values are needed (e.g. the next state).
    """
    entry: Hashable
    order: Sequence[Hashable]
    succ: Mapping[Hashable, Sequence[tuple[Edge, Hashable]]]
    want_env: frozenset = frozenset()


@dataclass
class DagEncoding:
    spec: DagSpec
    guards: dict[Hashable, z3.BoolRef]
    envs: dict[Hashable, Mapping[str, z3.ExprRef]]
    out: dict[Hashable, list[EdgeEnc]]
    incoming: dict[Hashable, list[EdgeEnc]]
    violations: list[Violation]
    side: list[z3.BoolRef]                        # range constraints of fresh constants, definitions
    aux: list[z3.ExprRef]                         # fresh constants (havoc values, choices, join values)

    def guard(self, node: Hashable) -> z3.BoolRef:
        return self.guards.get(node, FALSE)

    def error(self) -> z3.BoolRef:
        """Some assertion on some path fails."""
        return mk_or(*(v.cond for v in self.violations))

    def path(self, value: Callable[[z3.ExprRef], z3.ExprRef]
             ) -> tuple[list[EdgeEnc], Violation | None, Hashable]:
        """The unique active path in a model (`value` evaluates a term in it): the edges taken, the violation
        that ends it (if any), and the last node."""
        viol_at: dict[Hashable, list[Violation]] = {}
        for v in self.violations:
            viol_at.setdefault(v.node, []).append(v)
        node = self.spec.entry
        steps: list[EdgeEnc] = []
        while True:
            nxt = None
            for v in viol_at.get(node, []):
                if z3.is_true(value(v.cond)):
                    return steps, v, node
            for ee in self.out.get(node, []):
                if z3.is_true(value(ee.taken)):
                    nxt = ee
                    break
            if nxt is None:
                return steps, None, node
            steps.append(nxt)
            node = nxt.dst


# ------------------------------------------------------------------------------------------ encoder
class Encoder:
    """Expressions and statements of one program to z3, in integer or bit-vector semantics.

    `prefix` keeps the fresh constants of independent encodings (e.g. CPG regions) apart.
    """

    def __init__(self, program: Program | None = None, bitvector: bool = False, prefix: str = "",
                 deadline: float | None = None):
        self.program = program
        self.bv = bitvector
        self.prefix = prefix
        self.deadline = deadline
        self._counter = 0
        self._lits: dict[tuple[int, int | None], z3.ExprRef] = {}
        self._ev = Evaluator("wrap" if bitvector else "math")
        self._leaves: dict[int, tuple[str, ...]] = {}
        self.var_types: dict[str, Type] = (
            {n: i.var.type for n, i in program.variables.items()} if program is not None else {})
        self.nonlinear = False   # set once a product of variables, a non-constant division or int2bv appears
        self.arrays = False      # set once an array term appears
        self.ints = False        # bit-vector mode: set once a mathematical integer appears

    def logic(self) -> str | None:
        """The z3 logic to ask for, from what the encoding used (measured in engines/bmc.py):
        * linear integer formulas: QF_AUFLIA, up to 30x faster than the default on nested unrollings;
        * pure bit-vector formulas: QF_BV, z3's incremental SAT-based solver. It is faster, and it honours
          the timeout: the default smt core overran a 3 s timeout by 5 s on a 2048-fold unrolling;
        * anything with arrays, nonlinear or mixed terms: the default. (QF_AUFLIA answers
          `unknown (incomplete (theory array))` on constant arrays `K`.)"""
        if self.arrays or self.nonlinear:
            return None
        if self.bv:
            return None if self.ints else "QF_BV"
        return "QF_AUFLIA"

    def solver(self, deadline: float | None = None) -> Solver:
        logic = self.logic()
        return Solver(deadline, z3.SolverFor(logic) if logic else None)

    # ---------------------------------------------------------------- sorts, constants, values
    def sort(self, t: Type) -> z3.SortRef:
        if isinstance(t, BoolType):
            return z3.BoolSort()
        if isinstance(t, IntType):
            if self.bv and t.bounded:
                return z3.BitVecSort(t.bits)
            self.ints = True
            return z3.IntSort()
        if isinstance(t, ArrayType):
            self.arrays = True
            return z3.ArraySort(self.sort(t.index), self.sort(t.elem))
        raise TypeError(t)

    def const(self, name: str, t: Type) -> z3.ExprRef:
        return z3.Const(name, self.sort(t))

    def fresh(self, base: str, t: Type) -> z3.ExprRef:
        self._counter += 1
        return z3.Const(f"{self.prefix}{base}!{self._counter}", self.sort(t))

    def value(self, v: int | bool, t: Type) -> z3.ExprRef:
        """A Python value of an IR scalar type as a z3 literal (cached: numerals are built often)."""
        if isinstance(t, BoolType):
            return TRUE if v else FALSE
        key = (int(v), t.bits if (self.bv and t.bounded) else None)
        if key[1] is None:
            self.ints = True
        r = self._lits.get(key)
        if r is None:
            r = z3.BitVecVal(t.wrap(int(v)), t.bits) if key[1] is not None else z3.IntVal(int(v))
            self._lits[key] = r
        return r

    def in_range(self, term: z3.ExprRef, t: Type) -> list[z3.BoolRef]:
        """Type-range constraints a fresh value of type `t` needs (integer mode only; BVs are exact)."""
        if isinstance(t, IntType) and t.bounded and not self.bv:
            return [term >= t.min, term <= t.max]
        return []

    def to_python(self, val: z3.ExprRef, t: Type):
        """A z3 literal (from `model.eval(..., True)`) as the interpreter's value of type `t` (scalars)."""
        if isinstance(t, BoolType):
            return z3.is_true(val)
        if isinstance(t, IntType):
            if z3.is_bv_value(val):
                return val.as_signed_long() if t.signed else val.as_long()
            if z3.is_int_value(val):
                return val.as_long()
            raise ValueError(f"not a literal: {val}")
        raise TypeError(t)

    def term(self, v, t: Type) -> z3.ExprRef:
        """A value of the SSA environment (a z3 term, or a Python constant) as a z3 term."""
        return v if isinstance(v, z3.ExprRef) else self.value(v, t)

    # ---------------------------------------------------------------- expressions
    def value_of(self, e: Expr, env: Mapping[str, object]):
        """`e` as a Python constant when every variable it reads holds one, else as a z3 term.

        SSA environments keep constants as Python values: along unrolled loops with constant bounds most
        values are constants, and evaluating them with the interpreter's `Evaluator` (the semantics the
        encoding is tested against) is far cheaper than building and simplifying z3 terms.
        """
        if not isinstance(e.type, ArrayType):
            names = self._leaves.get(id(e))
            if names is None:
                names = tuple({n.name for n in walk(e) if isinstance(n, Var)})
                self._leaves[id(e)] = names
            vals = {}
            for nm in names:
                v = env[nm]
                if isinstance(v, z3.ExprRef):
                    break
                vals[nm] = v
            else:
                try:
                    return self._ev.eval(e, vals)
                except (UndefinedBehavior, ArithmeticError, TypeError):
                    pass  # undefined: leave it to the symbolic encoding
        return self.expr(e, env)

    def expr(self, e: Expr, env: Mapping[str, object]) -> z3.ExprRef:
        """Encode `e` with variables looked up in `env` (iterative: expressions may be deep)."""
        memo: dict[int, z3.ExprRef] = {}
        stack: list[tuple[Expr, bool]] = [(e, False)]
        while stack:
            n, ready = stack.pop()
            if id(n) in memo:
                continue
            kids = n.children()
            if kids and not ready:
                stack.append((n, True))
                for k in kids:
                    if id(k) not in memo:
                        stack.append((k, False))
                continue
            memo[id(n)] = self._node(n, [memo[id(k)] for k in kids], env)
        return memo[id(e)]

    def _node(self, n: Expr, k: list[z3.ExprRef], env: Mapping[str, z3.ExprRef]) -> z3.ExprRef:
        if isinstance(n, Var):
            try:
                v = env[n.name]
            except KeyError:
                raise KeyError(f"variable {n.name} has no value in this encoding") from None
            return v if isinstance(v, z3.ExprRef) else self.value(v, n.type)
        if isinstance(n, IntConst):
            return self.value(n.value, n.type)
        if isinstance(n, BoolConst):
            return z3.BoolVal(n.value)
        if isinstance(n, Not):
            return mk_not(k[0])
        if isinstance(n, And):
            return mk_and(*k)
        if isinstance(n, Or):
            return mk_or(*k)
        if isinstance(n, Ite):
            return mk_ite(k[0], k[1], k[2])
        if isinstance(n, Select):
            r = z3.Select(k[0], k[1])
            et = n.type
            if not self.bv and isinstance(et, IntType) and et.bounded:
                r = self._wrap(r, et, None)
            return r
        if isinstance(n, Store):
            return z3.Store(k[0], k[1], k[2])
        if isinstance(n, ConstArray):
            return z3.K(self.sort(n.type.index), k[0])
        if isinstance(n, Compare):
            r = self._compare(n, k[0], k[1])
        elif isinstance(n, Cast):
            r = self._cast(n, k[0])
        elif isinstance(n, Unary):
            r = self._unary(n, k[0])
        elif isinstance(n, Binary):
            r = self._binary(n, k[0], k[1])
        else:
            raise TypeError(f"cannot encode {type(n).__name__}")
        if all(is_val(x) for x in k) and not is_val(r):
            r = z3.simplify(r)  # local constant folding; children are literals, so this is O(1)
        return r

    def _compare(self, n: Compare, a, b):
        op = n.op
        if op == "==":
            return a == b
        if op == "!=":
            return a != b
        t = n.lhs.type
        if self.bv and isinstance(t, IntType) and t.bounded and not t.signed:
            return {"<": z3.ULT, "<=": z3.ULE, ">": z3.UGT, ">=": z3.UGE}[op](a, b)
        return a < b if op == "<" else a <= b if op == "<=" else a > b if op == ">" else a >= b

    def _cast(self, n: Cast, a):
        t, s = n.type, n.arg.type
        if isinstance(t, BoolType):
            if isinstance(s, BoolType):
                return a
            return a != self.value(0, s)
        assert isinstance(t, IntType)
        if isinstance(s, BoolType):
            return z3.If(a, self.value(1, t), self.value(0, t))
        assert isinstance(s, IntType)
        if self.bv:
            if t.bounded and s.bounded:
                if t.bits < s.bits:
                    return z3.Extract(t.bits - 1, 0, a)
                if t.bits > s.bits:
                    return (z3.SignExt if s.signed else z3.ZeroExt)(t.bits - s.bits, a)
                return a
            if t.bounded:
                return z3.Int2BV(a, t.bits)
            if s.bounded:
                return z3.BV2Int(a, is_signed=s.signed)
            return a
        if not t.bounded:
            return a
        return self._wrap(a, t, _srange(n.arg))

    def _wrap(self, a, t: IntType, rng: tuple[int, int] | None):
        """Exact `t.wrap(a)` in integer mode, as cheap as the static range `rng` of `a` allows."""
        lo_t, hi_t, m = t.min, t.max, 1 << t.bits
        if rng is not None:
            lo, hi = rng
            if lo_t <= lo and hi <= hi_t:
                return a
            if lo_t - m <= lo and hi <= hi_t + m:
                r = a
                if hi > hi_t:
                    r = z3.If(a > hi_t, a - m, r)
                if lo < lo_t:
                    r = z3.If(a < lo_t, a + m, r)
                return r
            return self._mod_wrap(a, t)
        return z3.If(z3.And(a >= lo_t, a <= hi_t), a, self._mod_wrap(a, t))

    @staticmethod
    def _mod_wrap(a, t: IntType):
        m = 1 << t.bits
        if t.signed:
            return (a - t.min) % m + t.min
        return a % m

    def _unary(self, n: Unary, a):
        t = n.type
        if self.bv and t.bounded:
            return -a if n.op == "-" else ~a
        if n.op == "-":
            if t.bounded and not t.signed:
                return z3.If(a == 0, z3.IntVal(0), (1 << t.bits) - a)
            return -a
        if n.op == "~":
            if t.bounded and not t.signed:
                return t.max - a
            return -a - 1
        raise TypeError(n.op)

    def _binary(self, n: Binary, a, b):
        op, t = n.op, n.type
        if self.bv and t.bounded:
            return self._bv_binary(n, a, b)
        ra, rb = _srange(n.lhs), _srange(n.rhs)
        ca = n.lhs.value if isinstance(n.lhs, IntConst) else None
        cb = n.rhs.value if isinstance(n.rhs, IntConst) else None
        unsigned = t.bounded and not t.signed
        if op in ("+", "-", "*"):
            if op == "*" and ca is None and cb is None:
                self.nonlinear = True
            r = a + b if op == "+" else a - b if op == "-" else a * b
            if not unsigned:
                return r  # signed overflow is undefined: the mathematical value
            rng = None
            if ra and rb:
                if op == "+":
                    rng = (ra[0] + rb[0], ra[1] + rb[1])
                elif op == "-":
                    rng = (ra[0] - rb[1], ra[1] - rb[0])
                else:
                    ps = [x * y for x in ra for y in rb]
                    rng = (min(ps), max(ps))
            return self._wrap(r, t, rng)
        if op in ("/", "%"):
            if cb is None:
                self.nonlinear = True
            return self._divmod(op, a, b, ra, rb, cb)
        if op in ("&", "|", "^"):
            return self._bitwise(op, a, b, t, ca, cb)
        if op in ("<<", ">>"):
            return self._shift(op, a, b, t, ra, cb, n)
        raise TypeError(op)

    @staticmethod
    def _divmod(op, a, b, ra, rb, cb):
        """C division truncates toward zero; z3's Int div/mod are Euclidean. Division by zero is undefined
        behaviour; z3 leaves `x div 0` unconstrained, which over-approximates it."""
        a_nonneg = ra is not None and ra[0] >= 0
        b_nonneg = rb is not None and rb[0] >= 0
        if a_nonneg and b_nonneg:
            return a / b if op == "/" else a % b
        if cb is not None and cb != 0:
            c = abs(cb)
            if op == "%":  # the sign follows the dividend; magnitude |a| mod |b|
                return a % c if a_nonneg else z3.If(a >= 0, a % c, -((-a) % c))
            q = a / c if a_nonneg else z3.If(a >= 0, a / c, -((-a) / c))
            return q if cb > 0 else -q
        abs_a = a if a_nonneg else z3.If(a >= 0, a, -a)
        abs_b = b if b_nonneg else z3.If(b >= 0, b, -b)
        mag = abs_a / abs_b
        q = z3.If((a >= 0) == (b >= 0), mag, -mag)
        return q if op == "/" else a - b * q

    def _roundtrip(self, op, a, b, t: IntType):
        if not t.bounded:
            raise UnsupportedError(f"bitwise '{op}' on mathematical integers")
        self.nonlinear = True
        w = t.bits
        x, y = z3.Int2BV(a, w), z3.Int2BV(b, w)
        r = x & y if op == "&" else x | y if op == "|" else x ^ y
        return z3.BV2Int(r, is_signed=t.signed)

    def _bitwise(self, op, a, b, t: IntType, ca, cb):
        if ca is not None and cb is None:
            a, b, ca, cb = b, a, cb, ca
        if cb is not None:
            ones = cb == -1 or (t.bounded and cb == t.max and not t.signed)
            if op == "&":
                if cb == 0:
                    return z3.IntVal(0)
                if ones:
                    return a
                if cb > 0 and (cb & (cb + 1)) == 0:          # 2^k - 1: the low k bits
                    return a % (cb + 1)
                low = (-cb) if t.signed or not t.bounded else (1 << t.bits) - cb
                if low > 0 and (low & (low - 1)) == 0:        # ~(2^k - 1): clear the low k bits
                    return a - a % low
            elif op == "|":
                if cb == 0:
                    return a
                if ones:
                    return z3.IntVal(cb)
            else:
                if cb == 0:
                    return a
                if ones:
                    return (t.max - a) if (t.bounded and not t.signed) else -a - 1
        return self._roundtrip(op, a, b, t)

    def _shift(self, op, a, b, t: IntType, ra, cb, n: Binary):
        """Shift amounts outside [0, w) are undefined behaviour; constant shifts are exact linear terms."""
        if cb is not None and 0 <= cb and (not t.bounded or cb < t.bits):
            p = 1 << cb
            if op == ">>":
                return a / p  # Euclidean div by a positive constant = floor = arithmetic shift
            r = a * p
            if t.bounded and not t.signed:
                rng = (ra[0] * p, ra[1] * p) if ra else None
                return self._wrap(r, t, rng)
            return r
        if not t.bounded:
            raise UnsupportedError("shift by a non-constant amount on mathematical integers")
        # A case split over the w defined amounts keeps the term linear (no int2bv); the last case also
        # stands for the undefined amounts.
        r = None
        for i in reversed(range(t.bits)):
            v = a / (1 << i) if op == ">>" else a * (1 << i)
            r = v if r is None else z3.If(b == i, v, r)
        if op == "<<" and not t.signed:
            rng = (ra[0], ra[1] << (t.bits - 1)) if ra else None
            return self._wrap(r, t, rng)
        return r

    def _bv_binary(self, n: Binary, a, b):
        op, t = n.op, n.type
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/":
            return a / b if t.signed else z3.UDiv(a, b)
        if op == "%":
            return z3.SRem(a, b) if t.signed else z3.URem(a, b)
        if op == "&":
            return a & b
        if op == "|":
            return a | b
        if op == "^":
            return a ^ b
        # shifts: the amount has its own type; bring it to the width of the shifted value
        rt = n.rhs.type
        w = t.bits
        if isinstance(rt, IntType) and rt.bounded:
            if rt.bits < w:
                b = z3.ZeroExt(w - rt.bits, b)
            elif rt.bits > w:
                # amounts >= w are undefined; keep them >= w after narrowing so they stay "large"
                b = z3.If(z3.UGE(b, z3.BitVecVal(w, rt.bits)), z3.BitVecVal(w, w), z3.Extract(w - 1, 0, b))
        else:
            b = z3.Int2BV(b, w)
        if op == "<<":
            return a << b
        return (a >> b) if t.signed else z3.LShR(a, b)

    # ---------------------------------------------------------------- environments
    def initial_env(self, variables: Iterable[Var], suffix: str = "0") -> tuple[dict[str, z3.ExprRef],
                                                                                  list[z3.BoolRef]]:
        """Constants `name!suffix` for the initial values, and their range constraints."""
        env: dict[str, z3.ExprRef] = {}
        side: list[z3.BoolRef] = []
        for v in variables:
            c = self.const(f"{self.prefix}{v.name}!{suffix}", v.type)
            env[v.name] = c
            side += self.in_range(c, v.type)
        return env, side

    # ---------------------------------------------------------------- DAGs
    def encode_dag(self, spec: DagSpec, env0: Mapping[str, z3.ExprRef], join_consts: bool = False,
                   name_guards: bool = False) -> DagEncoding:
        """SSA-encode a DAG of CFA edges from `spec.entry` with entry values `env0` (all variables).

        `name_guards=True` gives every node's guard a name (`g == Or(in-edges)`). Why: z3's simplifier
        flattens nested `And`s, which destroys the sharing of a guard chain along a path; a 2048-fold
        unrolling of a 3-variable loop became 4.2M expressions, and z3 overran its timeout by 4 s while
        preprocessing them. Named guards keep it linear and were as fast or faster on every unrolling we
        measured (e.g. 1024-fold: 0.99 s vs. timeout). Naming values too (at loop heads) was much slower
        (3.0 s vs 0.16 s at 256): the arithmetic simplifier folds `i-1-1-1` chains, names block that.
        `join_consts=True` names merged values at every join (measured: no gain; kept for experiments).
        """
        enc = DagEncoding(spec, {spec.entry: TRUE}, {spec.entry: env0}, {}, {}, [], [], [])
        for count, node in enumerate(spec.order):
            if count % 256 == 255:
                check_deadline(self.deadline)
            self._visit(enc, node, spec.succ.get(node), node in spec.want_env, join_consts, name_guards)
        return enc

    def encode_lazy(self, entry: Hashable, env0: Mapping[str, z3.ExprRef],
                    key: Callable[[Hashable], tuple], successors: Callable[[Hashable], Sequence[tuple[Edge, Hashable]]],
                    name_guards: bool = False) -> DagEncoding:
        """`encode_dag` for a DAG given implicitly, explored from `entry` in increasing `key` order (which
        must be topological: every edge goes to a larger key). A successor is only expanded when some edge
        into it is not constant-false after folding, so infeasible parts of an unrolling (loop counters
        past their constant bound) are never built: the symbolic-execution pruning of CBMC."""
        import heapq
        spec = DagSpec(entry, [], {})
        enc = DagEncoding(spec, {entry: TRUE}, {entry: env0}, {}, {}, [], [], [])
        heap: list = [(key(entry), 0, entry)]
        queued = {entry}
        tie = 0
        order: list[Hashable] = []
        succ: dict[Hashable, Sequence[tuple[Edge, Hashable]]] = {}
        while heap:
            if tie % 256 == 255 or len(order) % 256 == 255:
                check_deadline(self.deadline)
            _, _, node = heapq.heappop(heap)
            outs = successors(node)
            ees = self._visit(enc, node, outs, False, False, name_guards)
            if ees is None:
                continue
            order.append(node)
            if outs:
                succ[node] = outs
            for ee in ees:
                if not is_false(ee.taken) and ee.dst not in queued:
                    queued.add(ee.dst)
                    tie += 1
                    heapq.heappush(heap, (key(ee.dst), tie, ee.dst))
        spec.order, spec.succ = order, succ
        return enc

    def _visit(self, enc: DagEncoding, node: Hashable, outs: Sequence[tuple[Edge, Hashable]] | None,
               want_env: bool, join_consts: bool, name_guards: bool) -> list[EdgeEnc] | None:
        """Guard and merged values of `node` from its (already encoded) in-edges, then its out-edges.
        None if the node is unreachable."""
        if node != enc.spec.entry:
            ins = [ee for ee in enc.incoming.get(node, ()) if not is_false(ee.taken)]
            if not ins:
                return None
            g = mk_or(*(ee.taken for ee in ins))
            if name_guards and z3.Z3_get_app_num_args(g.ctx_ref(), g.ast) > 0:
                self._counter += 1
                gc = z3.Bool(f"{self.prefix}g!{self._counter}")
                enc.aux.append(gc)
                enc.side.append(gc == g)
                g = gc
            enc.guards[node] = g
            if outs or want_env:
                enc.envs[node] = self._merge(ins, enc, join_consts)
        if not outs:
            return []
        g = enc.guards[node]
        env = enc.envs[node]
        sels = self._selectors(outs, enc)
        result: list[EdgeEnc] = []
        for (edge, dst), sel in zip(outs, sels):
            ee = self._edge(node, edge, dst, env, mk_and(g, sel), enc)
            enc.out.setdefault(node, []).append(ee)
            enc.incoming.setdefault(dst, []).append(ee)
            result.append(ee)
        return result

    def _selectors(self, outs: Sequence[tuple[Edge, Hashable]], enc: DagEncoding) -> list[z3.BoolRef]:
        k = len(outs)
        if k == 1:
            return [TRUE]
        if k == 2:
            s1, s2 = outs[0][0].stmts, outs[1][0].stmts
            if (s1 and s2 and isinstance(s1[0], Assume) and isinstance(s2[0], Assume)
                    and _complementary(s1[0].cond, s2[0].cond)):
                return [TRUE, TRUE]
        sels: list[z3.BoolRef] = []
        prefix: list[z3.BoolRef] = []
        for i in range(k - 1):
            self._counter += 1
            c = z3.Bool(f"{self.prefix}ch!{self._counter}")
            enc.aux.append(c)
            sels.append(mk_and(*prefix, c))
            prefix.append(z3.Not(c))
        sels.append(mk_and(*prefix))
        return sels

    def _edge(self, node, edge: Edge, dst, env: Mapping[str, z3.ExprRef], pre: z3.BoolRef,
              enc: DagEncoding) -> EdgeEnc:
        written: dict[str, z3.ExprRef] = {}
        havocs: list[tuple[Var, z3.ExprRef]] = []
        cells: list[tuple[str, z3.ExprRef, z3.ExprRef]] = []
        conds = [pre]
        blocked = is_false(pre)
        types = self.var_types
        for idx, st in enumerate(edge.stmts):
            if blocked:
                break
            view = ChainMap(written, env) if written else env
            if isinstance(st, Assign):
                rhs = st.rhs
                if isinstance(rhs, Store) and rhs.array == st.lhs:
                    at = st.lhs.type
                    i = self.term(self.value_of(rhs.index, view), at.index)
                    v = self.term(self.value_of(rhs.value, view), at.elem)
                    written[st.lhs.name] = z3.Store(view[st.lhs.name], i, v)
                    cells.append((st.lhs.name, i, v))
                else:
                    written[st.lhs.name] = self.value_of(rhs, view)
            elif isinstance(st, Havoc):
                for v in st.vars:
                    c = self.fresh(v.name, v.type)
                    enc.aux.append(c)
                    enc.side.extend(self.in_range(c, v.type))
                    written[v.name] = c
                    havocs.append((v, c))
            elif isinstance(st, Assume):
                c = self.value_of(st.cond, view)
                if isinstance(c, bool):
                    blocked = not c
                else:
                    conds.append(c)
                    blocked = is_false(c)
            elif isinstance(st, Assert):
                c = self.value_of(st.cond, view)
                if isinstance(c, bool):
                    c = TRUE if c else FALSE
                viol = mk_and(*conds, mk_not(c))
                if not is_false(viol):
                    enc.violations.append(Violation(node, edge, idx, st, viol, ChainMap(dict(written), env),
                                                    dict(written), list(havocs), list(cells)))
                conds.append(c)
                blocked = is_false(c)
            else:
                raise UnsupportedError(f"statement {type(st).__name__}")
        taken = FALSE if blocked else mk_and(*conds)
        post = env if not written else {**env, **written}
        return EdgeEnc(node, edge, dst, taken, post, written, havocs, cells)

    def _merge(self, ins: list[EdgeEnc], enc: DagEncoding, join_consts: bool) -> Mapping[str, object]:
        if len(ins) == 1:
            return ins[0].env
        first = ins[0].env
        merged: dict[str, object] = {}
        for name, t0 in first.items():
            terms = [t0]
            same = True
            for ee in ins[1:]:
                t = ee.env[name]
                terms.append(t)
                if same and not _same_value(t, t0):
                    same = False
            if same:
                merged[name] = t0
                continue
            ty = self.var_types[name]
            r = self.term(terms[-1], ty)
            for ee, t in zip(reversed(ins[:-1]), reversed(terms[:-1])):
                r = mk_ite(ee.taken, self.term(t, ty), r)
            if join_consts:
                self._counter += 1
                c = z3.Const(f"{self.prefix}{name}!j{self._counter}", r.sort())
                enc.aux.append(c)
                enc.side.append(c == r)
                r = c
            merged[name] = r
        return merged


def _same_value(a, b) -> bool:
    if a is b:
        return True
    za, zb = isinstance(a, z3.ExprRef), isinstance(b, z3.ExprRef)
    if za and zb:
        return a.ast.value == b.ast.value
    return not za and not zb and a == b
