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
  ``farkas-dec`` (a variant outside the default order, for `tpa.itp_methods`) splits each certificate's A-sum by
  the A-local symbols its constraints share and keeps the parts with the sum (decomposed Farkas interpolants,
  OpenSMT's choice for Golem's TPA): more, smaller conjuncts, each a candidate lemma on its own.
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

import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import z3

from looprover.deadline import Deadline
from looprover.smt.horn import relation_body
from looprover.smt.itp_farkas import Farkas
from looprover.smt.itp_problem import MAX_ROUNDS, MethodFailed, Problem, as_formula, weaken
from looprover.smt.terms import any_of, dag_size
from looprover.smt.mbp import QEError, eliminate_quantifiers, free_constants, project, qe, vocabulary
from looprover.smt.tactics import apply as tactics_apply
from looprover.smt.solver import plain_solver

__all__ = [
    "METHODS", "SPACER_FIRST", "VARIANTS", "Attempt", "Interpolant", "ItpStats", "SatisfiableError", "check_interpolant",
    "compute_interpolant", "interpolate", "sequence_interpolate",
]

# Default order. Farkas first because on TPA-style queries (A = two copies of a transition abstraction, B = source
# and target state sets) its interpolants relate x and x'' alone (`x'' - x ≤ 2`) and are reusable for every
# midpoint query, while Spacer's are guarded by the particular B (`x ≤ 0 → x'' < 100`); see the module docstring.
METHODS: tuple[str, ...] = ("farkas", "spacer", "mbp", "qe")
SPACER_FIRST: tuple[str, ...] = ("spacer", "farkas", "mbp", "qe")
# also accepted: Farkas with decomposed certificates (itp_farkas.Farkas, `decompose`), not in the default order
VARIANTS: tuple[str, ...] = ("farkas-dec",)
_MIN_CHECK_SECONDS = 1.0      # a candidate found just before the deadline still gets this long to be checked
_SIMPLIFY_SECONDS = 0.2       # cap for ctx-solver-simplify (measured ~16 ms per TPA interpolant on small problems)


class SatisfiableError(ValueError):
    """`A ∧ B` is satisfiable, so no interpolant exists. `model` is a witness."""

    def __init__(self, model: z3.ModelRef):
        self.model = model
        super().__init__("interpolation precondition violated: A ∧ B is satisfiable")


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
        return dag_size(self.formula)


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
        s = plain_solver(ctx)
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
    if budget <= 0.01 or dag_size(I) > 400 or z3.is_true(I) or z3.is_false(I):
        return I
    try:
        J = tactics_apply("ctx-solver-simplify", I, Deadline.after(budget))
        if J is not None:
            J = z3.simplify(J, arith_lhs=True)
            if dag_size(J) <= dag_size(I):
                return J
    except z3.Z3Exception:
        pass
    return I


# --------------------------------------------------------------------------------------------------------------------
# method 1: Spacer

def _spacer(p: Problem, use_global: bool = False) -> z3.BoolRef:
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
            raise MethodFailed("timeout") from e
        raise
    if r == z3.unknown:
        raise MethodFailed("timeout" if "timeout" in fp.reason_unknown() or p.left() <= 0
                            else f"spacer unknown ({fp.reason_unknown()})")
    if r == z3.sat:
        raise MethodFailed("spacer: A ∧ B is satisfiable")
    found = relation_body(fp.get_answer(), itp, shared)
    if found is None:
        # `get_cover_delta(-1)` is only the lemmas at the infinity level: it is `true` when Spacer answered without
        # learning any (e.g. A unsat by itself), so it is only a fallback (and the check rejects a wrong one).
        cover = fp.get_cover_delta(-1, itp)
        found = z3.substitute_vars(cover, *shared) if shared else cover
    # Spacer keeps an `∃` when its own projection could not eliminate a local (seen with `distinct` + `mod`)
    try:
        return eliminate_quantifiers(found, deadline=p.limit())
    except QEError as e:
        raise MethodFailed(f"spacer answer is quantified: {e}") from e


# --------------------------------------------------------------------------------------------------------------------
# methods 3 and 4: projection

def _mbp(p: Problem) -> z3.BoolRef:
    """∨ of weakened model-based projections of A, one per model of `A ∧ ¬(disjuncts so far)`."""
    sA = p.solver(p.A)
    disj: list[z3.BoolRef] = []
    for _ in range(MAX_ROUNDS):
        if p.check(sA) == z3.unsat:
            return any_of(disj, p.ctx)
        P = weaken(p, project(p.A, sA.model(), keep=p.shared))
        disj.append(P)
        sA.add(z3.Not(P))
    raise MethodFailed("too many MBP rounds")


def _qe(p: Problem) -> z3.BoolRef:
    try:
        return qe(p.A, keep=p.shared, deadline=p.limit())
    except QEError as e:
        raise MethodFailed(str(e)) from e


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
    A_f = as_formula(A)
    B_f = as_formula(B, A_f.ctx)
    if A_f.ctx != B_f.ctx:
        raise ValueError("A and B live in different z3 contexts")
    # Work in a fresh context: z3's answers (Spacer's lemmas, the order of terms in sums) depend on term ids, i.e.
    # on everything a context has seen before, so this makes the result a function of the input alone. It also
    # keeps our auxiliary symbols out of the caller's context and costs ~3 ms.
    home = A_f.ctx
    work = z3.Context()
    p = Problem(A_f.translate(work), B_f.translate(work),
                None if shared is None else [v.translate(work) for v in shared], Deadline.after(timeout))
    methods = list(methods)
    unknown = [m for m in methods if m not in METHODS + VARIANTS]
    if unknown:
        raise ValueError(f"unknown interpolation methods {unknown}; choose from {METHODS + VARIANTS}")
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
    caps = {"spacer": 0.6 * timeout, "farkas": 0.6 * timeout, "farkas-dec": 0.6 * timeout}
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
            elif name in ("farkas", "farkas-dec"):
                raw = Farkas(p, decompose=name == "farkas-dec").run()
            elif name == "mbp":
                raw = _mbp(p)
            else:
                raw = _qe(p)
        except MethodFailed as e:
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
