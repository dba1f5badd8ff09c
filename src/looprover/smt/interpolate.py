"""Binary Craig interpolation for LIA/LRA over z3 terms (z3 itself has none; design/stack.md).

Given A, B with `A ∧ B` unsat, an interpolant I satisfies `A ⇒ I`, `I ∧ B` unsat, and I mentions only symbols
shared by A and B. TPA (design/algorithms.md B2) learns its transition-power abstractions from interpolants, so
their *generality* decides whether it converges; an interpolant that is merely valid (e.g. `∃local. A`) makes it
enumerate states. Methods, tried in this order by `compute_interpolant` (each result is checked before use):

- ``farkas``: enumerate implicant cubes of A (models of `A ∧ ¬I_so_far`), and for each cube the conflicting
  implicant cubes of B; each (A-cube, B-cube) conflict gets a Farkas interpolant (non-negative multipliers of a
  minimal LRA core, found by an exact rational LP in z3), with A-side equations weakened to `≤` and integer
  constraints tightened (gcd, rounding). A conflict with no rational certificate (parity) gets the exact
  projection of the A-cube onto the shared symbols, weakened by an unsat core against B. Subsumed disjuncts are
  dropped as the enumeration goes.
- ``spacer``: the two Horn clauses `A → Itp(shared)` and `Itp(shared) ∧ B → false`, solved by z3's Spacer; the
  solved `Itp` is the interpolant (xform inlining/slicing off, or Itp would be eliminated).
- ``mbp``: the disjunction of model-based projections of A onto the shared symbols, each weakened by an unsat
  core against B. Always terminates, generalises only through the core.
- ``qe``: `∃local. A` by exact QE: the strongest interpolant, always valid, poor generalisation.

Measured (this machine, 2 cores, noisy; scripts were throw-away):
- TPA-shaped queries (A = two copies of `Id ∨ Tr`, B = Init(x) ∧ Bad(x'')), 11 small loops: Farkas gives
  relations between x and x'' alone (`x'' - x ≤ 2`, `y'' - y = 2(x'' - x)`), Spacer gives facts guarded by B's
  constants (`x ≤ 0 → x'' < 100`) in 9 of 11. In a basic TPA loop (no seeds), Farkas-only vs Spacer-only:
  700-step unsafe counter UNSAFE at level 9 in 9 s vs no answer in 240 s; `i < n` summation SAFE in 0.35 s vs
  none in 240 s; parity (`x += 2`, bad `x = 7`) 0.6 s / 10 interpolants vs 5.8 s / 43. Hence Farkas first.
- Non-TPA chains (n steps of a 3/5-way branching 3-variable counter vs an unreachable end point, 18 problems,
  10 s each): Farkas solved 17 (0.1-3.8 s, 13-16 nodes), Spacer 15 (0.03-0.8 s when it succeeds, 18 nodes),
  MBP 9 (60-220 nodes). Spacer is fastest when it works, so it is the second method.
- Unit-size problems (tests): 20-150 ms per method including the fresh context (~3 ms) and the two checks.
- Fuzzing (600 random unsat LIA pairs with Booleans, `mod`, `distinct`, term ites, and 100 LRA/mixed pairs, all
  four methods each): every method returned a checked interpolant every time, 25-45 ms on average.

Everything is deterministic: each call works in a fresh z3 context (z3's answers depend on term ids), with fixed
seeds and a fixed enumeration order. Non-goals: arrays, bit-vectors, uninterpreted functions (the call returns
None after the checks reject what the methods produce, or at once for functions and quantifiers).
"""
from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import z3

from looprover.smt.mbp import (ModelValues, QEError, eliminate_quantifiers, free_constants, implicant, project, qe,
                               vocabulary)

__all__ = [
    "METHODS", "SPACER_FIRST", "Attempt", "Interpolant", "ItpStats", "SatisfiableError", "check_interpolant",
    "compute_interpolant", "interpolate", "sequence_interpolate", "term_size",
]

# Default order. Farkas first because on TPA-style queries (A = two copies of a transition abstraction, B = source
# and target state sets) its interpolants relate x and x'' alone (`x'' - x ≤ 2`) and are reusable for every
# midpoint query, while Spacer's are guarded by the particular B (`x ≤ 0 → x'' < 100`); see the module docstring.
METHODS: tuple[str, ...] = ("farkas", "spacer", "mbp", "qe")
SPACER_FIRST: tuple[str, ...] = ("spacer", "farkas", "mbp", "qe")
_MIN_CHECK_SECONDS = 1.0      # a candidate found just before the deadline still gets this long to be checked
_SIMPLIFY_SECONDS = 0.2       # cap for ctx-solver-simplify (measured ~16 ms per TPA interpolant on small problems)
_MAX_ROUNDS = 500             # cube-enumeration cap per loop (a safety net against DNF blow-up)


class SatisfiableError(ValueError):
    """`A ∧ B` is satisfiable, so no interpolant exists. `model` is a witness."""

    def __init__(self, model: z3.ModelRef):
        self.model = model
        super().__init__("interpolation precondition violated: A ∧ B is satisfiable")


class _MethodFailed(Exception):
    """A method could not produce a candidate (timeout, unsupported construct, enumeration cap)."""


@dataclass
class Attempt:
    method: str
    outcome: str          # "ok", "timeout", "failed: ...", "rejected: ..." (candidate failed the check)
    seconds: float


@dataclass
class Interpolant:
    formula: z3.BoolRef
    method: str           # which method produced it (one of METHODS)
    seconds: float        # total time of the call, checks included
    attempts: list[Attempt] = field(default_factory=list)

    @property
    def size(self) -> int:
        return term_size(self.formula)


@dataclass
class ItpStats:
    """Running counters for a caller that interpolates many times (e.g. one TPA run)."""
    calls: int = 0
    failures: int = 0
    seconds: float = 0.0
    wins: Counter = field(default_factory=Counter)
    rejected: Counter = field(default_factory=Counter)
    timeouts: Counter = field(default_factory=Counter)

    def record(self, attempts: Sequence[Attempt], result: Interpolant | None, seconds: float) -> None:
        self.calls += 1
        self.seconds += seconds
        if result is None:
            self.failures += 1
        else:
            self.wins[result.method] += 1
        for a in attempts:
            if a.outcome.startswith("rejected"):
                self.rejected[a.method] += 1
            elif a.outcome == "timeout":
                self.timeouts[a.method] += 1


def term_size(f: z3.ExprRef) -> int:
    """Number of distinct sub-terms (DAG size): the size measure we report and compare."""
    seen: set[int] = set()
    todo = [f]
    while todo:
        t = todo.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_app(t):
            todo.extend(t.children())
    return len(seen)


# --------------------------------------------------------------------------------------------------------------------
# the problem and its deadline

def _as_formula(f: z3.BoolRef | Sequence[z3.BoolRef], ctx: z3.Context | None = None) -> z3.BoolRef:
    if isinstance(f, z3.ExprRef):
        return f
    fs = list(f)
    if not fs:
        return z3.BoolVal(True, ctx)
    return fs[0] if len(fs) == 1 else z3.And(fs)


class _Problem:
    def __init__(self, A: z3.BoolRef, B: z3.BoolRef, shared: Sequence[z3.ExprRef] | None, deadline: float):
        if A.ctx != B.ctx:
            raise ValueError("A and B live in different z3 contexts")
        self.A, self.B, self.ctx, self.deadline = A, B, A.ctx, deadline
        self.method_deadline = deadline         # the running method's own (earlier) deadline, see `budget`
        va, vb = vocabulary(A), vocabulary(B)
        a_consts, b_consts = va.constants, vb.constants
        b_ids = {c.get_id() for c in b_consts}
        common = [c for c in a_consts if c.get_id() in b_ids]
        if shared is None:
            self.shared = common
        else:
            self.shared = list({v.get_id(): v for v in shared}.values())
            given = {v.get_id() for v in self.shared}
            missing = [c for c in common if c.get_id() not in given]
            if missing:
                raise ValueError(f"shared= omits symbols occurring in both A and B: {missing}")
        self.shared_ids = {v.get_id() for v in self.shared}
        self.a_local = [c for c in a_consts if c.get_id() not in self.shared_ids]
        self.b_local = [c for c in b_consts if c.get_id() not in self.shared_ids]
        for v in self.shared:
            if not (z3.is_const(v) and v.decl().kind() == z3.Z3_OP_UNINTERPRETED):
                raise ValueError(f"shared= must list uninterpreted constants, not {v}")
        if va.functions or vb.functions:
            self.unsupported = "uninterpreted functions"
        elif va.quantified or vb.quantified:
            self.unsupported = "quantifiers"
        else:
            self.unsupported = None

    def left(self) -> float:
        """Seconds left for the running method."""
        return min(self.deadline, self.method_deadline) - time.monotonic()

    def total_left(self) -> float:
        return self.deadline - time.monotonic()

    def budget(self, cap: float | None) -> None:
        self.method_deadline = self.deadline if cap is None else time.monotonic() + max(cap, 0.0)

    def ms(self, cap: float | None = None) -> int:
        """Milliseconds left (≥ 1), optionally capped; raises _MethodFailed('timeout') when the time is up."""
        left = self.left()
        if cap is not None:
            left = min(left, cap)
        if left <= 0:
            raise _MethodFailed("timeout")
        return max(1, int(left * 1000))

    def solver(self, *fs: z3.BoolRef) -> z3.Solver:
        s = z3.Solver(ctx=self.ctx)
        s.set("random_seed", 0)
        for f in fs:
            s.add(f)
        return s

    def check(self, s: z3.Solver, *assumptions: z3.BoolRef) -> z3.CheckSatResult:
        s.set("timeout", self.ms())
        r = s.check(*assumptions)
        if r == z3.unknown:
            raise _MethodFailed("timeout" if self.left() <= 0 else f"solver unknown ({s.reason_unknown()})")
        return r


# --------------------------------------------------------------------------------------------------------------------
# checking and simplification

def check_interpolant(A: z3.BoolRef, B: z3.BoolRef, I: z3.BoolRef, shared: Sequence[z3.ExprRef],
                      timeout: float = 10.0) -> str | None:
    """None if I is a (quantifier-free) interpolant of (A, B) over `shared`, otherwise the reason it is not.

    Timeouts count as failures: an unchecked candidate is never returned.
    """
    ctx = A.ctx
    allowed = {v.get_id() for v in shared}
    voc = vocabulary(I)
    extra = [c for c in voc.constants if c.get_id() not in allowed]
    if extra:
        return f"mentions non-shared symbols {extra}"
    if voc.functions or voc.quantified:
        return "not a quantifier-free formula over the shared constants"
    ms = max(1, int(timeout * 1000))
    for name, fs in (("A ⇒ I", (A, z3.Not(I))), ("I ∧ B unsat", (I, B))):
        s = z3.Solver(ctx=ctx)
        s.set("random_seed", 0)
        s.set("timeout", ms)
        s.add(*fs)
        r = s.check()
        if r != z3.unsat:
            return f"{name} fails ({r})"
    return None


def _simplify(I: z3.BoolRef, budget: float) -> z3.BoolRef:
    """z3.simplify, then context-dependent simplification when the formula is small enough to make it cheap."""
    I = z3.simplify(I, arith_lhs=True)
    if budget <= 0.01 or term_size(I) > 400 or z3.is_true(I) or z3.is_false(I):
        return I
    try:
        g = z3.Goal(ctx=I.ctx)
        g.add(I)
        tac = z3.TryFor(z3.Tactic("ctx-solver-simplify", ctx=I.ctx), max(1, int(budget * 1000)))
        res = tac(g)
        if len(res) == 1:
            g0 = list(res[0])
            J = z3.simplify(_mk_and(g0, I.ctx), arith_lhs=True)
            if term_size(J) <= term_size(I):
                return J
    except z3.Z3Exception:
        pass
    return I


# --------------------------------------------------------------------------------------------------------------------
# method 1: Spacer

def _spacer(p: _Problem, use_global: bool = False) -> z3.BoolRef:
    """Interpolant as the solved relation of `A → Itp(shared)`, `Itp(shared) ∧ B → false`.

    The xform passes are off because inlining/slicing would eliminate `Itp` itself (its only role is to be the
    cut point between A and B).
    """
    ctx, shared, A, B, a_local, b_local = p.ctx, p.shared, p.A, p.B, p.a_local, p.b_local
    sorts = [v.sort() for v in shared]
    itp = z3.Function("itp!rel", *sorts, z3.BoolSort(ctx))
    err = z3.Function("itp!err", z3.BoolSort(ctx))
    fp = z3.Fixedpoint(ctx=ctx)
    fp.set(engine="spacer")
    fp.set("xform.inline_eager", False, "xform.inline_linear", False, "xform.slice", False)
    fp.set("spacer.random_seed", 0)
    if use_global:
        fp.set("spacer.global", True)
    fp.set("timeout", p.ms())
    fp.register_relation(itp, err)
    variables = list({c.get_id(): c for c in shared + a_local + b_local}.values())
    if variables:
        fp.declare_var(*variables)
    head = itp(*shared) if shared else itp()
    fp.rule(head, A)
    fp.rule(err(), [head, B])
    try:
        r = fp.query(err())
    except z3.Z3Exception as e:       # the timer cancels Spacer with an exception rather than `unknown`
        if "cancel" in str(e) or "timeout" in str(e) or p.left() <= 0:
            raise _MethodFailed("timeout") from e
        raise
    if r == z3.unknown:
        raise _MethodFailed("timeout" if "timeout" in fp.reason_unknown() or p.left() <= 0
                            else f"spacer unknown ({fp.reason_unknown()})")
    if r == z3.sat:
        raise _MethodFailed("spacer: A ∧ B is satisfiable")
    found = _definition(fp.get_answer(), itp, shared)
    if found is None:
        # `get_cover_delta(-1)` is only the lemmas at the infinity level: it is `true` when Spacer answered without
        # learning any (e.g. A unsat by itself), so it is only a fallback (and the check rejects a wrong one).
        cover = fp.get_cover_delta(-1, itp)
        found = z3.substitute_vars(cover, *shared) if shared else cover
    # Spacer keeps an `∃` when its own projection could not eliminate a local (seen with `distinct` + `mod`)
    try:
        return eliminate_quantifiers(found, timeout=p.ms() / 1000)
    except QEError as e:
        raise _MethodFailed(f"spacer answer is quantified: {e}") from e


def _definition(answer: z3.ExprRef, rel: z3.FuncDeclRef, args: list[z3.ExprRef]) -> z3.BoolRef | None:
    """The body of `rel` in Spacer's answer `And(..., ForAll(vs, rel(vs) == body), ...)`, over `args`."""
    todo = [answer]
    while todo:
        t = todo.pop()
        if z3.is_and(t):
            todo.extend(t.children())
            continue
        n = 0
        if z3.is_quantifier(t):
            if not t.is_forall():
                continue
            n, t = t.num_vars(), t.body()
        if z3.is_app(t) and t.decl() == rel:
            head, body = t, z3.BoolVal(True, t.ctx)
        elif z3.is_not(t) and z3.is_app(t.arg(0)) and t.arg(0).decl() == rel:
            head, body = t.arg(0), z3.BoolVal(False, t.ctx)
        elif z3.is_eq(t) and z3.is_app(t.arg(0)) and t.arg(0).decl() == rel:
            head, body = t.arg(0), t.arg(1)
        else:
            continue
        subst: list[z3.ExprRef | None] = [None] * n
        for k, a in enumerate(head.children()):
            if not z3.is_var(a) or subst[z3.get_var_index(a)] is not None:
                return None
            subst[z3.get_var_index(a)] = args[k]
        if any(v is None for v in subst):
            return None
        return z3.substitute_vars(body, *subst) if n else body
    return None


# --------------------------------------------------------------------------------------------------------------------
# linear constraints

def _kind(t: z3.ExprRef) -> int | None:
    return t.decl().kind() if z3.is_app(t) else None


_ARITH_REL = (z3.Z3_OP_LE, z3.Z3_OP_LT, z3.Z3_OP_GE, z3.Z3_OP_GT)


class _NonLinear(Exception):
    pass


@dataclass
class _Lin:
    """Σ coeffs[v]·v  rel  const, rel ∈ {'<=', '<', '='}; `lit` is the literal it came from."""
    coeffs: dict[int, Fraction]
    rel: str
    const: Fraction
    lit: z3.BoolRef


def _linear(t: z3.ExprRef, syms: dict[int, z3.ExprRef], memo: dict) -> tuple[dict[int, Fraction], Fraction]:
    """Σ coeffs·vars + const for a linear term; raises _NonLinear. `memo` maps id → (term, result) and keeps the
    term alive, because z3 reuses the ids of freed terms."""
    tid = t.get_id()
    hit = memo.get(tid)
    if hit is not None:
        return hit[1]
    if z3.is_int_value(t):
        res: tuple[dict[int, Fraction], Fraction] = ({}, Fraction(t.as_long()))
    elif z3.is_rational_value(t):
        res = ({}, Fraction(t.numerator_as_long(), t.denominator_as_long()))
    elif z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED:
        syms[tid] = t
        res = ({tid: Fraction(1)}, Fraction(0))
    else:
        k = _kind(t)
        if k in (z3.Z3_OP_ADD, z3.Z3_OP_SUB):
            parts = [_linear(c, syms, memo) for c in t.children()]
            co: dict[int, Fraction] = dict(parts[0][0])
            const = parts[0][1]
            sign = 1 if k == z3.Z3_OP_ADD else -1
            for pc, pk in parts[1:]:
                for v, a in pc.items():
                    co[v] = co.get(v, Fraction(0)) + sign * a
                const += sign * pk
            res = ({v: a for v, a in co.items() if a != 0}, const)
        elif k == z3.Z3_OP_UMINUS:
            pc, pk = _linear(t.arg(0), syms, memo)
            res = ({v: -a for v, a in pc.items()}, -pk)
        elif k == z3.Z3_OP_MUL:
            parts = [_linear(c, syms, memo) for c in t.children()]
            scale, lin = Fraction(1), None
            for pc, pk in parts:
                if pc:
                    if lin is not None:
                        raise _NonLinear
                    lin = (pc, pk)
                else:
                    scale *= pk
            if lin is None:
                res = ({}, scale)
            else:
                res = ({v: scale * a for v, a in lin[0].items() if scale * a != 0}, scale * lin[1])
        elif k == z3.Z3_OP_DIV:
            (nc, nk), (dc, dk) = (_linear(c, syms, memo) for c in t.children())
            if dc or dk == 0:
                raise _NonLinear
            res = ({v: a / dk for v, a in nc.items()}, nk / dk)
        elif k == z3.Z3_OP_TO_REAL:
            res = _linear(t.arg(0), syms, memo)
        else:
            raise _NonLinear
    memo[tid] = (t, res)
    return res


def _is_int_lin(coeffs: dict[int, Fraction], syms: dict[int, z3.ExprRef]) -> bool:
    return all(syms[v].is_int() for v in coeffs)


def _tighten(coeffs: dict[int, Fraction], rel: str, const: Fraction) -> tuple[dict[int, Fraction], str, Fraction]:
    """Integer normal form of an all-integer constraint: integer coprime coefficients, `<` turned into `<=`,
    constant rounded (an equation with no integer solution becomes `0 <= -1`). Equivalent over the integers, and
    stronger over the rationals, which is what lets Farkas refute more integer conflicts (e.g. `0 < x < 1`).
    """
    if not coeffs:
        return coeffs, rel, const
    lcm = 1
    for a in coeffs.values():
        lcm = lcm * a.denominator // math.gcd(lcm, a.denominator)
    ints = {v: int(a * lcm) for v, a in coeffs.items()}
    c = const * lcm
    g = 0
    for a in ints.values():
        g = math.gcd(g, abs(a))
    if rel == "=":
        if c.denominator != 1 or int(c) % g != 0:
            return {}, "<=", Fraction(-1)
        return {v: Fraction(a // g) for v, a in ints.items()}, "=", Fraction(int(c) // g)
    bound = math.ceil(c) - 1 if rel == "<" else math.floor(c)
    return {v: Fraction(a // g) for v, a in ints.items()}, "<=", Fraction(bound // g)


def _scale(coeffs: dict[int, Fraction], const: Fraction) -> tuple[dict[int, Fraction], Fraction]:
    """Multiply by the positive factor that makes the coefficients coprime integers (readability only)."""
    lcm = 1
    for a in coeffs.values():
        lcm = lcm * a.denominator // math.gcd(lcm, a.denominator)
    g = 0
    for a in coeffs.values():
        g = math.gcd(g, abs(int(a * lcm)))
    f = Fraction(lcm, g)
    return {v: a * f for v, a in coeffs.items()}, const * f


def _to_lin(lit: z3.BoolRef, val: ModelValues, syms: dict[int, z3.ExprRef],
            memo: dict) -> _Lin | None:
    """The literal as a linear constraint, None if it is not an arithmetic (in)equation; raises _NonLinear."""
    pol = True
    atom = lit
    if _kind(atom) == z3.Z3_OP_NOT:
        pol, atom = False, atom.arg(0)
    k = _kind(atom)
    if k not in _ARITH_REL and not (k == z3.Z3_OP_EQ and z3.is_arith(atom.arg(0))):
        return None
    (lc, lk), (rc, rk) = _linear(atom.arg(0), syms, memo), _linear(atom.arg(1), syms, memo)
    co = dict(lc)
    for v, a in rc.items():
        co[v] = co.get(v, Fraction(0)) - a
    co = {v: a for v, a in co.items() if a != 0}
    k0 = lk - rk                      # the atom is  Σ co·x + k0  ⋈  0
    neg = {v: -a for v, a in co.items()}
    if k == z3.Z3_OP_EQ:
        if pol:
            rel, coeffs, const = "=", co, -k0
        elif not val(atom.arg(0) < atom.arg(1)):     # the model picks the side of the disequality
            rel, coeffs, const = "<", neg, k0
        else:
            rel, coeffs, const = "<", co, -k0
    else:
        # normalise to  e ≤ 0 / e < 0 with e = ±(Σ co·x + k0)
        le, lt, ge, gt = z3.Z3_OP_LE, z3.Z3_OP_LT, z3.Z3_OP_GE, z3.Z3_OP_GT
        if not pol:
            k = {le: gt, lt: ge, ge: lt, gt: le}[k]
        if k in (le, lt):
            coeffs, const = co, -k0
        else:
            coeffs, const = neg, k0
        rel = "<=" if k in (le, ge) else "<"
    if _is_int_lin(coeffs, syms):
        coeffs, rel, const = _tighten(coeffs, rel, const)
    return _Lin(coeffs, rel, const, lit)


@dataclass
class _Cube:
    lits: list[z3.BoolRef]
    lin: list[_Lin]
    props: dict[tuple[int, bool], z3.BoolRef]     # non-arithmetic literals by (atom id, polarity)
    opaque: list[z3.BoolRef]                      # arithmetic literals Farkas cannot use (mod, div, products)


_OPAQUE = object()


def _cube(lits: list[z3.BoolRef], m: z3.ModelRef, syms: dict[int, z3.ExprRef], memo: dict) -> _Cube:
    """Classify a cube's literals. Conversions of literals that do not depend on the model (all but
    disequalities) are cached in `memo` under ('lit', id), next to the term cache of `_linear`."""
    val = ModelValues(m)
    cube = _Cube(lits, [], {}, [])
    for lit in lits:
        key = ("lit", lit.get_id())
        hit = memo.get(key)
        if hit is not None:
            lin = hit[1]
        else:
            try:
                lin = _to_lin(lit, val, syms, memo)
            except (_NonLinear, RecursionError):
                lin = _OPAQUE
            diseq = _kind(lit) == z3.Z3_OP_NOT and _kind(lit.arg(0)) == z3.Z3_OP_EQ
            if not diseq:
                memo[key] = (lit, lin)         # the literal is kept alive: z3 reuses ids of freed terms
        if lin is _OPAQUE:
            cube.opaque.append(lit)
            continue
        if lin is None:
            pol = _kind(lit) != z3.Z3_OP_NOT
            atom = lit if pol else lit.arg(0)
            cube.props[(atom.get_id(), pol)] = lit
        elif not lin.coeffs and _const_true(lin):
            continue
        else:
            cube.lin.append(lin)
    return cube


def _const_true(c: _Lin) -> bool:
    return {"<=": 0 <= c.const, "<": 0 < c.const, "=": c.const == 0}[c.rel]


def _lin_expr(coeffs: dict[int, Fraction], rel: str, const: Fraction, syms: dict[int, z3.ExprRef],
              ctx: z3.Context) -> z3.BoolRef:
    if not coeffs:
        return z3.BoolVal({"<=": 0 <= const, "<": 0 < const, "=": const == 0}[rel], ctx)
    ordered = sorted(coeffs.items(), key=lambda kv: str(syms[kv[0]]))
    if _is_int_lin(coeffs, syms) and all(a.denominator == 1 for a in coeffs.values()) and const.denominator == 1:
        terms = [syms[v] if a == 1 else z3.IntVal(int(a), ctx) * syms[v] for v, a in ordered]
        rhs: z3.ArithRef = z3.IntVal(int(const), ctx)
    else:
        def real(v: int) -> z3.ArithRef:
            s = syms[v]
            return z3.ToReal(s) if s.is_int() else s
        terms = [real(v) if a == 1 else z3.RealVal(a, ctx) * real(v) for v, a in ordered]
        rhs = z3.RealVal(const, ctx)
    lhs = terms[0] if len(terms) == 1 else z3.Sum(terms)
    return {"<=": lhs <= rhs, "<": lhs < rhs, "=": lhs == rhs}[rel]


# --------------------------------------------------------------------------------------------------------------------
# method 2: Farkas

class _Farkas:
    def __init__(self, p: _Problem):
        self.p = p
        self.syms: dict[int, z3.ExprRef] = {}
        self.memo: dict = {}
        self.relax: dict[int, z3.ArithRef] = {}
        self.relaxed: dict[tuple, z3.BoolRef] = {}

    def run(self) -> z3.BoolRef:
        p = self.p
        sA = p.solver(p.A)
        disj: list[z3.BoolRef] = []
        for _ in range(_MAX_ROUNDS):
            if p.check(sA) == z3.unsat:
                return _mk_or(disj, p.ctx)
            mA = sA.model()
            cA = _cube(implicant(p.A, mA), mA, self.syms, self.memo)
            K = self._cube_vs_b(cA)
            # later pieces often subsume earlier ones (`x'' ≤ 52` after `x'' ≤ 51`): keep the disjunction small
            disj = [D for D in disj if not self._implies(D, K)] + [K]
            sA.add(z3.Not(K))
        raise _MethodFailed("too many A-cubes")

    def _implies(self, f: z3.BoolRef, g: z3.BoolRef) -> bool:
        return self.p.check(self.p.solver(f, z3.Not(g))) == z3.unsat

    def _cube_vs_b(self, cA: _Cube) -> z3.BoolRef:
        """An interpolant of (∧cA, B): the conjunction of per-B-cube pieces until B is blocked."""
        p = self.p
        sB = p.solver(p.B)
        conj: list[z3.BoolRef] = []
        for _ in range(_MAX_ROUNDS):
            if p.check(sB) == z3.unsat:
                return _mk_and(conj, p.ctx)
            mB = sB.model()
            cB = _cube(implicant(p.B, mB), mB, self.syms, self.memo)
            piece = self._cube_vs_cube(cA, cB)
            if piece is None:
                # no rational certificate: the exact projection of cA, weakened against all of B at once
                conj.append(self._project_weaken(cA))
                return _mk_and(conj, p.ctx)
            conj.append(piece)
            sB.add(piece)
        raise _MethodFailed("too many B-cubes")

    def _cube_vs_cube(self, cA: _Cube, cB: _Cube) -> z3.BoolRef | None:
        # a propositional conflict needs no arithmetic
        for (aid, pol), lit in cA.props.items():
            if (aid, not pol) in cB.props:
                return lit
        for c in cA.lin:
            if not c.coeffs:          # a constant-false constraint: the A-cube is contradictory by itself
                return z3.BoolVal(False, self.p.ctx)
        for c in cB.lin:
            if not c.coeffs:
                return z3.BoolVal(True, self.p.ctx)
        core = self._lra_core(cA.lin, cB.lin)
        if core is None:
            return None
        return self._certificate(core)

    def _rel_term(self, c: _Lin) -> z3.BoolRef:
        """The constraint over rational copies of its variables (the LRA relaxation), cached by content."""
        key = (tuple(sorted(c.coeffs.items())), c.rel, c.const)
        hit = self.relaxed.get(key)
        if hit is not None:
            return hit
        ctx = self.p.ctx
        for v in c.coeffs:
            if v not in self.relax:
                self.relax[v] = z3.Real(f"farkas!{v}", ctx)
        lhs = z3.Sum([z3.RealVal(a, ctx) * self.relax[v] for v, a in c.coeffs.items()])
        rhs = z3.RealVal(c.const, ctx)
        term = {"<=": lhs <= rhs, "<": lhs < rhs, "=": lhs == rhs}[c.rel]
        self.relaxed[key] = term
        return term

    def _lra_core(self, la: list[_Lin], lb: list[_Lin]) -> list[tuple[int, _Lin]] | None:
        """A minimal subset of the constraints (tagged 0 = A, 1 = B) that is unsat over the rationals.

        Minimal cores give Farkas sums over few atoms, i.e. short, general interpolants.
        """
        p = self.p
        s = p.solver()
        s.set("core.minimize", True)
        tagged = [(0, c) for c in la] + [(1, c) for c in lb]
        names = [z3.Bool(f"farkas!p{i}", p.ctx) for i in range(len(tagged))]
        for n, (_, c) in zip(names, tagged):
            s.add(z3.Implies(n, self._rel_term(c)))
        if p.check(s, *names) == z3.sat:
            return None
        by_id = {n.get_id(): i for i, n in enumerate(names)}

        def core_of() -> list[int]:
            return sorted(by_id[n.get_id()] for n in s.unsat_core())

        core = core_of()
        # deletion-based minimisation on top of z3's, on the same solver (assumptions only)
        i = 0
        while i < len(core):
            trial = core[:i] + core[i + 1:]
            if p.check(s, *[names[j] for j in trial]) == z3.unsat:
                core = [j for j in core_of() if j in set(trial)]
            else:
                i += 1
        return [tagged[j] for j in core]

    def _certificate(self, core: list[tuple[int, _Lin]]) -> z3.BoolRef:
        """Solve for Farkas multipliers λ of the core and return the A-side weighted sum."""
        p, ctx = self.p, self.p.ctx
        lam = [z3.Real(f"farkas!l{i}", ctx) for i in range(len(core))]
        s = p.solver()
        for l, (_, c) in zip(lam, core):
            if c.rel != "=":
                s.add(l >= 0)
        variables = sorted({v for _, c in core for v in c.coeffs})
        for v in variables:
            s.add(z3.Sum([z3.RealVal(c.coeffs[v], ctx) * l for l, (_, c) in zip(lam, core) if v in c.coeffs]
                         + [z3.RealVal(0, ctx)]) == 0)
        total = z3.Sum([z3.RealVal(c.const, ctx) * l for l, (_, c) in zip(lam, core)] + [z3.RealVal(0, ctx)])
        strict = [l for l, (_, c) in zip(lam, core) if c.rel == "<"]
        s.add(z3.Or(total < 0, z3.And(total <= 0, z3.Sum(strict + [z3.RealVal(0, ctx)]) > 0)))
        if p.check(s) != z3.sat:
            raise _MethodFailed("farkas: no certificate for an LRA-unsat core")
        m = s.model()
        co: dict[int, Fraction] = {}
        const = Fraction(0)
        rels = set()
        for l, (side, c) in zip(lam, core):
            if side != 0:
                continue
            w = m.eval(l, model_completion=True).as_fraction()
            if w == 0:
                continue
            for v, a in c.coeffs.items():
                co[v] = co.get(v, Fraction(0)) + w * a
            const += w * c.const
            rels.add(c.rel)
        co = {v: a for v, a in co.items() if a != 0}
        # An A-sum of equations is weakened to `≤` in the direction the certificate uses: still implied by the
        # A-cube, still refuted by the B-sum (the B side supplies any strictness), and far more general (a path
        # `x'' = x + 2` yields `x'' - x ≤ 2`, which also covers the shorter paths TPA would otherwise enumerate).
        rel = "<" if "<" in rels else "<="
        if co and _is_int_lin(co, self.syms):
            co, rel, const = _tighten(co, rel, const)
        elif co:
            co, const = _scale(co, const)
        return _lin_expr(co, rel, const, self.syms, ctx)

    def _project_weaken(self, cA: _Cube) -> z3.BoolRef:
        p = self.p
        try:
            P = qe(z3.And(cA.lits) if cA.lits else z3.BoolVal(True, p.ctx), keep=p.shared, timeout=p.ms() / 1000)
        except QEError as e:
            raise _MethodFailed(str(e)) from e
        return _weaken(p, P)


def _mk_and(fs: list[z3.BoolRef], ctx: z3.Context) -> z3.BoolRef:
    return z3.BoolVal(True, ctx) if not fs else fs[0] if len(fs) == 1 else z3.And(fs)


def _mk_or(fs: list[z3.BoolRef], ctx: z3.Context) -> z3.BoolRef:
    return z3.BoolVal(False, ctx) if not fs else fs[0] if len(fs) == 1 else z3.Or(fs)


def _conjuncts(f: z3.BoolRef) -> list[z3.BoolRef]:
    out, todo = [], [f]
    while todo:
        t = todo.pop()
        if _kind(t) == z3.Z3_OP_AND:
            todo.extend(reversed(t.children()))
        elif not z3.is_true(t):
            out.append(t)
    return out


def _weaken(p: _Problem, P: z3.BoolRef) -> z3.BoolRef:
    """The conjuncts of P in an unsat core of `P ∧ B` (P ∧ B must be unsat): implied by P, still inconsistent
    with B, and usually much more general than P."""
    parts = _conjuncts(P)
    if len(parts) <= 1:
        return P
    s = p.solver(p.B)
    s.set("core.minimize", True)
    names = [z3.Bool(f"weaken!{i}", p.ctx) for i in range(len(parts))]
    for n, c in zip(names, parts):
        s.add(z3.Implies(n, c))
    if p.check(s, *names) == z3.sat:
        raise _MethodFailed("weakening: the projection is consistent with B")
    core_ids = {n.get_id() for n in s.unsat_core()}
    kept = [c for n, c in zip(names, parts) if n.get_id() in core_ids]
    return _mk_and(kept, p.ctx)


# --------------------------------------------------------------------------------------------------------------------
# methods 3 and 4: projection

def _mbp(p: _Problem) -> z3.BoolRef:
    """∨ of weakened model-based projections of A, one per model of `A ∧ ¬(disjuncts so far)`."""
    sA = p.solver(p.A)
    disj: list[z3.BoolRef] = []
    for _ in range(_MAX_ROUNDS):
        if p.check(sA) == z3.unsat:
            return _mk_or(disj, p.ctx)
        P = _weaken(p, project(p.A, sA.model(), keep=p.shared))
        disj.append(P)
        sA.add(z3.Not(P))
    raise _MethodFailed("too many MBP rounds")


def _qe(p: _Problem) -> z3.BoolRef:
    try:
        return qe(p.A, keep=p.shared, timeout=p.ms() / 1000)
    except QEError as e:
        raise _MethodFailed(str(e)) from e


# --------------------------------------------------------------------------------------------------------------------
# entry points

def compute_interpolant(A: z3.BoolRef | Sequence[z3.BoolRef], B: z3.BoolRef | Sequence[z3.BoolRef],
                        shared: Sequence[z3.ExprRef] | None = None, timeout: float = 10.0, *,
                        spacer_timeout: float | None = None, methods: Iterable[str] = METHODS,
                        method_timeouts: Mapping[str, float] | None = None,
                        check_unsat: bool = True, spacer_global: bool = False,
                        stats: ItpStats | None = None) -> Interpolant | None:
    """A checked interpolant of (A, B) with the method that produced it, or None if every method failed.

    `shared` (default: the constants common to A and B) is the allowed vocabulary; it must contain every common
    constant (ValueError otherwise) and may contain more. `timeout` bounds the whole call (soft: a late candidate
    still gets up to 1 s to be checked). Farkas and Spacer each get at most 60% of `timeout` so that the
    fallbacks keep some time -- also when they are the only method asked for; `spacer_timeout` and
    `method_timeouts` (e.g. `{"farkas": 2.0}`) override the caps.
    `methods` is the order to try (default METHODS; SPACER_FIRST is the other useful one). Raises
    SatisfiableError when `A ∧ B` is satisfiable (skip that check with `check_unsat=False` if the caller has just
    established unsatisfiability).
    """
    start = time.monotonic()
    A_f = _as_formula(A)
    B_f = _as_formula(B, A_f.ctx)
    if A_f.ctx != B_f.ctx:
        raise ValueError("A and B live in different z3 contexts")
    # Work in a fresh context: z3's answers (Spacer's lemmas, the order of terms in sums) depend on term ids, i.e.
    # on everything a context has seen before, so this makes the result a function of the input alone. It also
    # keeps our auxiliary symbols out of the caller's context and costs ~3 ms.
    home = A_f.ctx
    work = z3.Context()
    p = _Problem(A_f.translate(work), B_f.translate(work),
                 None if shared is None else [v.translate(work) for v in shared], start + timeout)
    methods = list(methods)
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown interpolation methods {unknown}; choose from {METHODS}")
    attempts: list[Attempt] = []

    def finish(result: Interpolant | None) -> Interpolant | None:
        if stats is not None:
            stats.record(attempts, result, time.monotonic() - start)
        return result

    if p.unsupported:
        attempts.append(Attempt("-", f"failed: unsupported {p.unsupported}", 0.0))
        return finish(None)
    if check_unsat:
        s = p.solver(p.A, p.B)
        s.set("timeout", max(1, int(max(p.total_left(), _MIN_CHECK_SECONDS) * 1000)))
        if s.check() == z3.sat:
            raise SatisfiableError(s.model().translate(home))
    caps = {"spacer": 0.6 * timeout, "farkas": 0.6 * timeout}
    if spacer_timeout is not None:
        caps["spacer"] = spacer_timeout
    caps.update(method_timeouts or {})
    for name in methods:
        t0 = time.monotonic()
        p.budget(caps.get(name))
        if p.left() <= 0:
            attempts.append(Attempt(name, "timeout", 0.0))
            continue
        try:
            if name == "spacer":
                raw = _spacer(p, spacer_global)
            elif name == "farkas":
                raw = _Farkas(p).run()
            elif name == "mbp":
                raw = _mbp(p)
            else:
                raw = _qe(p)
        except _MethodFailed as e:
            msg = str(e)
            attempts.append(Attempt(name, "timeout" if msg == "timeout" else f"failed: {msg}",
                                    time.monotonic() - t0))
            continue
        except (z3.Z3Exception, ValueError, RecursionError) as e:     # defensive: a method bug must not escape
            attempts.append(Attempt(name, f"failed: {type(e).__name__} {e}", time.monotonic() - t0))
            continue
        p.budget(None)
        check_s = max(p.total_left(), _MIN_CHECK_SECONDS)
        I = _simplify(raw, min(p.total_left(), _SIMPLIFY_SECONDS))
        why = check_interpolant(p.A, p.B, I, p.shared, timeout=check_s)
        if why is not None and I is not raw:
            why_raw = check_interpolant(p.A, p.B, raw, p.shared, timeout=check_s)
            if why_raw is None:
                I, why = raw, None
        if why is not None:
            attempts.append(Attempt(name, f"rejected: {why}", time.monotonic() - t0))
            continue
        attempts.append(Attempt(name, "ok", time.monotonic() - t0))
        return finish(Interpolant(I.translate(home), name, time.monotonic() - start, attempts))
    return finish(None)


def interpolate(A: z3.BoolRef | Sequence[z3.BoolRef], B: z3.BoolRef | Sequence[z3.BoolRef],
                shared: Sequence[z3.ExprRef] | None = None, timeout: float = 10.0, **kwargs) -> z3.BoolRef | None:
    """The formula of `compute_interpolant(A, B, shared, timeout, **kwargs)`, or None if no method succeeded.

    Guarantees (checked before returning): `A ⇒ I` is valid, `I ∧ B` is unsat, I is quantifier-free over
    `shared`. Raises SatisfiableError if `A ∧ B` is satisfiable.
    """
    r = compute_interpolant(A, B, shared, timeout, **kwargs)
    return None if r is None else r.formula


def sequence_interpolate(parts: Sequence[z3.BoolRef], timeout: float = 10.0, **kwargs) -> list[z3.BoolRef] | None:
    """Sequence interpolants I_1..I_{n-1} of an unsat conjunction P_1 ∧ … ∧ P_n: `I_{k-1} ∧ P_k ⇒ I_k`
    (I_0 = true, I_n = false) and I_k only over symbols shared by P_1..P_k and P_{k+1}..P_n.

    Built by n-1 binary calls, I_k = Itp(I_{k-1} ∧ P_k, P_{k+1} ∧ … ∧ P_n), which keeps the chain condition by
    construction. None if a binary call fails.
    """
    if len(parts) < 2:
        raise ValueError("need at least two parts")
    deadline = time.monotonic() + timeout
    ctx = parts[0].ctx
    prev: z3.BoolRef = z3.BoolVal(True, ctx)
    out: list[z3.BoolRef] = []
    for k in range(1, len(parts)):
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        pre, post = parts[:k], parts[k:]
        post_ids = {c.get_id() for c in free_constants(*post)}
        shared = [c for c in free_constants(*pre) if c.get_id() in post_ids]
        A = z3.And(prev, parts[k - 1])
        I = interpolate(A, z3.And(list(post)), shared, left, check_unsat=(k == 1), **kwargs)
        if I is None:
            return None
        out.append(I)
        prev = I
    return out
