"""IR expressions -> z3 terms (`Encoder`): sorts, constants, values, and the C semantics of each operator.

Two semantics (`bitvector=False` is the default):

* integer mode: every C integer is a z3 Int. Unsigned arithmetic wraps explicitly modulo 2^w; signed
  arithmetic keeps the mathematical value (signed overflow is undefined, so the encoding only has to be exact
  on executions without it: that is the guarantee of a TRUE in this mode); casts wrap like `IntType.wrap`;
  `/` and `%` truncate like C (z3's div/mod are Euclidean, so signs are fixed up); bitwise operators use
  exact arithmetic identities where they exist (masks `2^k-1` as `mod`, constant shifts as `*`/`div`,
  other shifts as a case split over the w amounts) and an `int2bv`/`bv2int` round trip otherwise. Fresh
  values (havoc, initial state) get range constraints; an array read of a bounded element type is clamped to
  the type's range, because a havocked array is an unconstrained Int->Int map. Why clamping: it is linear
  (a wrap is a `mod`), it is the identity on every value an execution without signed overflow stores, and it
  keeps order: `a[i] = j` with `j >= 0` reads back `>= 0` even where j overflowed (with a wrap, a quantified
  invariant `a[k] >= 0` over cells the program filled with a growing sum would not be inductive).
* bit-vector mode: each bounded type is a bit-vector of its width (two's complement, signed overflow wraps,
  as gcc does); mathematical integers (`MATH_INT`) stay Int.

Constants stay Python values in SSA environments and are evaluated with the interpreter's `Evaluator`
(`Encoder.value_of`); `Encoder.logic` picks the z3 logic. All terms live in z3's main context.

This module is only about what one expression means. Statements and control flow (the SSA encoding of DAGs
of CFA edges) are in `smt.dag`, the cutpoint graph's transition system in `smt.cpg_system`; both build
their terms through an `Encoder`, which is why it also hands out fresh names (`fresh_name`).
"""
from __future__ import annotations

from collections import ChainMap
from typing import Iterable, Mapping

import z3

from looprover.deadline import Deadline
from looprover.errors import UnsupportedError
from looprover.program.cfa import Program
from looprover.program.expr import (
    BINDERS, And, ArrayFill, ArrayType, Binary, BoolConst, BoolType, Cast, Compare, ConstArray, Expr, ForAll,
    IntConst, IntType, Ite, Not, Or, Select, Store, Type, Unary, Var, and_, cast, cmp, const, free_vars, ite, not_,
    or_, substitute, walk,
)
from looprover.program.interp import Evaluator, UndefinedBehavior
from looprover.smt.solver import Solver
from looprover.smt.terms import FALSE, TRUE, is_val, mk_and, mk_ite, mk_not, mk_or


# ------------------------------------------------------------------------------------------ helpers
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


def truncating_divmod(t: z3.ExprRef) -> tuple[str, z3.ExprRef, int] | None:
    """("%", a, c) when `t` is how `Encoder` writes C's truncating `a % c` for a constant c > 0 whose dividend may
    be negative, `If(a >= 0, a % c, -((-a) % c))`; ("/", a, c) for the same with `/`; else None. (The witness
    writer reads these back as C, `witness.cexpr`.)"""
    if not z3.is_app_of(t, z3.Z3_OP_ITE):
        return None
    cond, pos, neg = t.children()
    if not (z3.is_app_of(cond, z3.Z3_OP_GE) and z3.is_int_value(cond.arg(1)) and cond.arg(1).as_long() == 0
            and (z3.is_app_of(pos, z3.Z3_OP_MOD) or z3.is_app_of(pos, z3.Z3_OP_IDIV))
            and z3.is_int_value(pos.arg(1)) and pos.arg(1).as_long() > 0):
        return None
    a, c = cond.arg(0), pos.arg(1)
    rem = z3.is_app_of(pos, z3.Z3_OP_MOD)
    if not z3.eq(pos.arg(0), a) or not z3.eq(z3.simplify(neg), z3.simplify(-((-a) % c) if rem else -((-a) / c))):
        return None
    return ("%" if rem else "/"), a, c.as_long()


def _c_remainder_of(t: z3.ExprRef, d: int) -> z3.ExprRef | None:
    """X when `t` is how C's `X % d` is encoded for d > 0 (`X mod d`, or the sign-fixed `truncating_divmod`)."""
    if z3.is_app_of(t, z3.Z3_OP_MOD) and z3.is_int_value(t.arg(1)) and t.arg(1).as_long() == d:
        return t.arg(0)
    got = truncating_divmod(t)
    return got[1] if got is not None and got[0] == "%" and got[2] == d else None


def _euclidean_dividend(op: str, a: z3.ExprRef, cb: int | None) -> z3.ExprRef | None:
    """X when C's `a op cb` is SMT-LIB's Euclidean `X mod |cb|` / `X div cb`, read off the shape of `a`:
    `((X % d) + d) % d` and `(X - ((X % d) + d) % d) / c` with d = |c| are how Euclidean remainder and division
    are written with C's truncating operators (the CHC front-end reads `mod`/`div` so: `smt.readback`). Encoded
    back as one z3 `mod`/`div` instead of the six sign-fixed ones a literal encoding gives, which made TPA's
    interpolation and purified transition relations several times larger (fm24's const_div files)."""
    if cb is None or cb == 0 or not z3.is_app(a) or a.num_args() != 2:
        return None
    d = abs(cb)
    lhs, rhs = a.arg(0), a.arg(1)
    if op == "%" and z3.is_app_of(a, z3.Z3_OP_ADD) and z3.is_int_value(rhs) and rhs.as_long() == d:
        return _c_remainder_of(lhs, d)               # (X % d) + d lies in (0, 2d): C's % is Euclidean there
    if op == "/" and z3.is_app_of(a, z3.Z3_OP_SUB) and z3.is_app_of(rhs, z3.Z3_OP_MOD) and \
            rhs.arg(0).eq(lhs) and z3.is_int_value(rhs.arg(1)) and rhs.arg(1).as_long() == d:
        return lhs                                   # X - X mod d is a multiple of d: the division is exact
    return None


def _bitwise_identity(op: str, a, cb: int, t: IntType):
    """`a op cb` (op in &, |, ^; cb a constant) as an exact linear term where an identity exists (masks 2^k-1,
    their complements, 0 and all-ones), else None: the integer encoding then needs an int2bv round trip."""
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
    return None


def cell_read(array: z3.ArrayRef, index: z3.ExprRef, elem: Type, bv: bool) -> z3.ExprRef:
    """A read of `array`'s cell `index`: in integer mode, clamped to a bounded element type's range (`IntType.clamp`,
    module docstring). The witness reader (`witness/cexpr.py`) reads a C cell `a[i]` through it too."""
    r = z3.Select(array, index)
    if not bv and isinstance(elem, IntType) and elem.bounded:
        r = z3.If(r < elem.min, elem.min, z3.If(r > elem.max, elem.max, r))
    return r


def bitvector_reason(program: Program) -> str | None:
    """Why the integer encoding of `program` would be hopeless -- a bitwise &, |, ^ that needs the int2bv round
    trip (no linear identity) -- or None. Such programs are encoded with bit-vectors instead (`jobs.verify_job`):
    measured on five assertions over &, |, ^ and `x & (x - 1)`: UNKNOWN after 10 s with integers, 0.5 s with
    bit-vectors. The switch is sound both ways: executions without signed overflow mean the same in both
    encodings, and every counterexample is replayed with signed overflow refused in either mode."""
    probe = z3.Int("bitwise!probe")
    for edge, stmt in program.statements():
        for root in (getattr(stmt, "rhs", None), getattr(stmt, "cond", None)):
            if root is None:
                continue
            for n in walk(root):
                if not (isinstance(n, Binary) and n.op in ("&", "|", "^") and isinstance(n.type, IntType)
                        and n.type.bounded):
                    continue
                const = n.rhs if isinstance(n.rhs, IntConst) else n.lhs if isinstance(n.lhs, IntConst) else None
                if const is None or _bitwise_identity(n.op, probe, const.value, n.type) is None:
                    where = stmt.src or edge.src_loc
                    return f"bitwise '{n.op}' without a linear identity" + (f" at {where}" if where else "")
    return None


# ------------------------------------------------------------------------------------------ encoder
class Encoder:
    """Expressions of one program to z3, in integer or bit-vector semantics (statements: `smt.dag`).

    `prefix` keeps the fresh constants of independent encodings (e.g. CPG regions) apart.
    """

    def __init__(self, program: Program | None = None, bitvector: bool = False, prefix: str = "",
                 deadline: Deadline | None = None):
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
        # integer mode: the wrap-free value (and its range) behind each wrapped unsigned +, -, * result, keyed by
        # (term id, modulus); see `_unsigned_arith`. The wrapped term is kept alive with it (z3 reuses ids).
        self._unwrapped: dict[tuple[int, int], tuple[z3.ArithRef, tuple[int, int] | None, z3.ExprRef]] = {}
        self.nonlinear = False   # set once a product of variables, a non-constant division or int2bv appears
        self.arrays = False      # set once an array term appears
        self.ints = False        # bit-vector mode: set once a mathematical integer appears
        self.quantified = False  # set once a `ForAll` or `ArrayFill` (a lambda) appears
        self.binders = 0         # how many `ForAll`/`ArrayFill` nodes were encoded (`smt.dag` names their conditions)

    def logic(self) -> str | None:
        """The z3 logic to ask for, from what the encoding used (measured in engines/bmc.py):
        * linear integer formulas: QF_AUFLIA, up to 30x faster than the default on nested unrollings;
        * pure bit-vector formulas: QF_BV, z3's incremental SAT-based solver. It is faster, and it honours
          the timeout: the default smt core overran a 3 s timeout by 5 s on a 2048-fold unrolling;
        * anything with arrays, nonlinear or mixed terms: the default. (QF_AUFLIA answers
          `unknown (incomplete (theory array))` on constant arrays `K`.)"""
        if self.arrays or self.nonlinear or self.quantified:
            return None
        if self.bv:
            return None if self.ints else "QF_BV"
        return "QF_AUFLIA"

    def solver(self, deadline: Deadline | None = None) -> Solver:
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

    def fresh_name(self, base: str, tag: str = "") -> str:
        """A new name `<prefix><base>!<tag><n>`: one counter numbers all fresh constants of this encoder
        (havoc values, and the guard, choice and join constants of `smt.dag`)."""
        self._counter += 1
        return f"{self.prefix}{base}!{tag}{self._counter}"

    def fresh(self, base: str, t: Type) -> z3.ExprRef:
        return z3.Const(self.fresh_name(base), self.sort(t))

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
                names = tuple({v.name for v in free_vars(e)})
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
            if isinstance(n, BINDERS):
                memo[id(n)] = self._binder(n, env)
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
            return cell_read(k[0], k[1], n.type, self.bv)
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

    def _binder(self, n: Expr, env: Mapping[str, object]) -> z3.ExprRef:
        """`ForAll` as a z3 quantifier; `ArrayFill` as a z3 lambda over the index, whose cell j holds
        `value[var := (j - start) / stride]` where j is one of the filled cells (`expr.ArrayFill`)."""
        self.quantified = True
        self.binders += 1
        k = n.var
        if isinstance(n, ForAll):
            kc = z3.Const(self.fresh_name(k.name, "q"), self.sort(k.type))
            body = or_(not_(cmp("<=", n.lo, k)), not_(cmp("<", k, n.hi)), n.body)
            return z3.ForAll([kc], self.expr(body, ChainMap({k.name: kc}, env)))
        assert isinstance(n, ArrayFill)
        at: ArrayType = n.type
        j = Var(k.name + "!cell", at.index)
        jc = z3.Const(self.fresh_name(j.name, "q"), self.sort(at.index))
        s = n.stride
        d = Binary("-", cast(k.type, j), n.start, k.type)
        dd = d if s > 0 else Unary("-", d, k.type)
        step = const(abs(s), k.type)
        zero = const(0, k.type)
        member = [cmp(">=", dd, zero), cmp("<", Binary("/", dd, step, k.type), n.count)]
        if abs(s) != 1:
            member.append(cmp("==", Binary("%", dd, step, k.type), zero))
        body = ite(and_(*member), substitute(n.value, {k: Binary("/", dd, step, k.type)}),
                   Select(n.array, j, at.elem))
        return z3.Lambda([jc], self.expr(body, ChainMap({j.name: jc}, env)))

    def _compare(self, n: Compare, a, b):
        op = n.op
        if self.bv and op in ("<=", ">="):
            r = self._product_bound(n, a)
            if r is not None:
                return r
        if op == "==":
            return a == b
        if op == "!=":
            return a != b
        t = n.lhs.type
        if self.bv and isinstance(t, IntType) and t.bounded and not t.signed:
            return {"<": z3.ULT, "<=": z3.ULE, ">": z3.UGT, ">=": z3.UGE}[op](a, b)
        return a < b if op == "<" else a <= b if op == "<=" else a > b if op == ">" else a >= b

    @staticmethod
    def _product_bound(n: Compare, a):
        """`wide(x) * wide(y) <= max` / `>= min` of x's type t (the multiplication checks of `program/instrument.py`)
        as z3's signed multiplication overflow predicates on x and y: exact, and they bit-blast far smaller than
        the product of twice the width (measured: 1 s against 15 s to prove a 32-bit product of operands below
        46341 in range). `a` is the encoded product, whose operands are read off its sign extensions."""
        p, bound = n.lhs, n.rhs
        if not (isinstance(p, Binary) and p.op == "*" and isinstance(bound, IntConst)
                and isinstance(p.lhs, Cast) and isinstance(p.rhs, Cast)):
            return None
        t, w = p.lhs.arg.type, p.type
        if not (isinstance(t, IntType) and t.bounded and t.signed and p.rhs.arg.type == t and w.bounded and w.signed
                and w.bits >= 2 * t.bits):
            return None
        if not (z3.is_app_of(a, z3.Z3_OP_BMUL) and a.num_args() == 2
                and all(z3.is_app_of(c, z3.Z3_OP_SIGN_EXT) and c.arg(0).size() == t.bits for c in a.children())):
            return None
        x, y = (c.arg(0) for c in a.children())
        if n.op == "<=" and bound.value == t.max:
            return z3.BVMulNoOverflow(x, y, True)
        if n.op == ">=" and bound.value == t.min:
            return z3.BVMulNoUnderflow(x, y)
        return None

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

    def _unsigned_arith(self, op: str, a, b, ra, rb, t: IntType, linear: bool):
        """Unsigned `a op b` wrapped to t, computed from the operands' wrap-free values where known.

        Why: `y += 3u` repeated n times wrapped after every step is a chain of n nested case splits, and z3's time
        grew superlinearly with n (issue 14: 1.3 s at n = 80, 5.4 s at 160, timeout at 240). Since
        `wrap(wrap(u) op v) = wrap(u op v)` for +, -, * modulo 2^w, the result is instead one wrap of the
        wrap-free sum `x + 3n`, whatever n. Products are only unfolded with a constant factor (linear terms)."""
        m = 1 << t.bits
        ua, ra = self._wrap_free(a, m, ra) if linear else (a, ra)
        ub, rb = self._wrap_free(b, m, rb) if linear else (b, rb)
        r = ua + ub if op == "+" else ua - ub if op == "-" else ua * ub
        rng = None
        if ra and rb:
            if op == "+":
                rng = (ra[0] + rb[0], ra[1] + rb[1])
            elif op == "-":
                rng = (ra[0] - rb[1], ra[1] - rb[0])
            else:
                ps = [x * y for x in ra for y in rb]
                rng = (min(ps), max(ps))
        w = self._wrap(r, t, rng)
        if linear and not w.eq(r):
            self._unwrapped[(w.get_id(), m)] = (r, rng, w)
        return w

    def _wrap_free(self, a, m: int, rng):
        """(the wrap-free value of the wrapped unsigned term `a` modulo m, its range), or `a` itself."""
        hit = self._unwrapped.get((a.get_id(), m))
        return (hit[0], hit[1]) if hit is not None else (a, rng)

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
            if not unsigned:
                # signed overflow is undefined: the mathematical value
                return a + b if op == "+" else a - b if op == "-" else a * b
            return self._unsigned_arith(op, a, b, ra, rb, t, linear=op != "*" or ca is not None or cb is not None)
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
        x = _euclidean_dividend(op, a, cb)
        if x is not None:
            return x % abs(cb) if op == "%" else x / cb
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
            r = _bitwise_identity(op, a, cb, t)
            if r is not None:
                return r
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
