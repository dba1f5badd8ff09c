"""Exact transition powers E_j = Tr^{=2^j} by quantifier elimination: the deep-counterexample booster.

Why: a REACHABLE answer of basic TPA at level n is confirmed by recursing into both halves down to level 0, i.e.
by 2^n base-case queries -- linear in the counterexample length. Golem (C++) can afford ~10^6 tiny queries; from
Python each costs about a millisecond, so a counter that fails after 10^6 steps would take far too long. When
the loop is simple enough that `E_{j+1}(x, x'') = ∃x'. E_j(x, x') ∧ E_j(x', x'')` stays small under exact QE
(counters, affine updates with a guard), one SMT query over `E_0 … E_m` with a selector bit per power decides
whether `T` is reachable from `S` in exactly Σ b_j·2^j steps, for every length below 2^{m+1} at once.

Soundness: only the under-approximation direction matters (every E_j pair must be a real 2^j-step path).
QE is equivalence-preserving; the result is simplified by equivalence-preserving tactics only. Powers are
computed lazily, under a size cap and a time cap; the first failure stops the sequence for good, and the
caller confirms longer paths by the plain TPA recursion down to the powers it has (so loops with branching
updates still work, just slower). A reachability query over the powers that z3 does not answer in time stops
their use altogether (`slow`).
"""
from __future__ import annotations

import time

import z3

from looprover.smt.mbp import QEError, qe
from looprover.smt.terms import dag_size, subterms
from looprover.deadline import Deadline, OutOfTime
from looprover.errors import GiveUp
from looprover.smt.solver import check, plain_solver
from looprover.smt.tactics import merged_bounds
from looprover.tpa.result import State, Vocabulary, state_of

MAX_TERM_SIZE = 400          # DAG size above which a power is considered to have blown up
# A power is not attempted after one above this size: from one power to the next the sizes grew 1.5-2.6-fold in
# every run measured (19, 33, 76, 117, 298; 70, 133, 302), so its QE would only run into its time cap (2.7 s per
# loop in fm24's s_split_42, five loops) to give a result over MAX_TERM_SIZE. A size, not a time: runs stay
# deterministic.
GROWTH_GUARD = MAX_TERM_SIZE * 2 // 3
QE_CAP_SECONDS = 2.0         # per power
# A relation that branches (if-then-else, disjunction, disequality) or divides confirms paths shorter than
# 2^FROM_LEVEL steps by the plain recursion: it costs about one base-case query (10-30 ms) per two steps, so below
# 128 steps it is cheaper than powers whose QE fails at its cap or grows piece by piece, the common case there
# (fm24's s_split_23, a division: 2.0 of the 5.7 s a 100-step exit query took, and every loop of a multi-loop system
# paid it; s_split_42, piecewise increments: TRUE in 8 s without short-path powers, over 10 s with them). A
# convex relation (a conjunction of linear constraints: counters, affine updates) has cheap powers that pay at any
# length (fm24's exact_iters_2: 5 s with them at every level, over 10 s without).
FROM_LEVEL = 7
REACH_CAP_SECONDS = 2.0      # per reachability query over E_0..E_m; slower means the booster does not pay here


_BRANCHING = (z3.Z3_OP_ITE, z3.Z3_OP_OR, z3.Z3_OP_IMPLIES, z3.Z3_OP_XOR, z3.Z3_OP_DISTINCT, z3.Z3_OP_IDIV,
              z3.Z3_OP_MOD, z3.Z3_OP_REM, z3.Z3_OP_DIV)
_INEQUALITIES = (z3.Z3_OP_LE, z3.Z3_OP_LT, z3.Z3_OP_GE, z3.Z3_OP_GT)


def convex(trans: z3.BoolRef) -> bool:
    """Is `trans` a conjunction of linear (in)equations, with negation only on inequalities? (Syntactic: no
    if-then-else, disjunction, disequality or division anywhere.)"""
    for t in subterms(trans):
        if not z3.is_app(t):
            return False
        k = t.decl().kind()
        if k in _BRANCHING:
            return False
        if k == z3.Z3_OP_NOT and not (z3.is_app(t.arg(0)) and t.arg(0).decl().kind() in _INEQUALITIES):
            return False
    return True


class ExactPowers:
    """Lazily computed exact powers E_0 = Tr (with aux), E_j over (x, x') for j ≥ 1."""

    def __init__(self, voc: Vocabulary, enabled: bool = True, convex: bool = True):
        self.voc = voc
        self.convex = convex            # Tr (as given, before `smt/divmod`) is convex; else short paths skip powers
        self.powers: list[z3.BoolRef] = []          # E_1, E_2, ... (index j-1)
        self.failed: str | None = None if enabled else "disabled"     # why the sequence stopped
        self.slow: str | None = None                                   # why the powers are not queried any more
        self.seconds = 0.0

    def worth_it(self, m: int) -> bool:
        """Should lengths below 2^{m+1} be confirmed through the powers (see FROM_LEVEL)?"""
        return m >= FROM_LEVEL or self.convex

    def available(self, m: int, deadline: Deadline) -> bool:
        """Make E_1..E_m available if possible; False when the sequence stopped below m."""
        voc = self.voc
        while len(self.powers) < m and self.failed is None:
            if deadline.left() <= 0.05:
                return False
            j = len(self.powers)              # computing E_{j+1}
            if j and dag_size(self.powers[-1]) > GROWTH_GUARD:
                self.failed = f"power {j + 1} not attempted: power {j} has {dag_size(self.powers[-1])} nodes"
                break
            t0 = time.monotonic()
            if j == 0:
                a, b = voc.aux_copy("pw1"), voc.aux_copy("pw2")
                comp = z3.And(voc.trans(voc.x, voc.x1, "pw1"), voc.trans(voc.x1, voc.x2, "pw2"))
                elim = voc.x1 + a + b
            else:
                e = self.powers[j - 1]
                comp = z3.And(e, voc.rel_to(e, voc.x1, voc.x2))
                elim = list(voc.x1)
            try:
                limit = deadline.cap(min(QE_CAP_SECONDS, max(0.05, deadline.left() / 10)))
                r = qe(comp, eliminate=elim, deadline=limit)
                r = merged_bounds(r, deadline)
            except (QEError, z3.Z3Exception) as exc:
                self.failed = f"QE of power {j + 1} failed: {exc}"
                r = None
            if r is not None and dag_size(r) > MAX_TERM_SIZE:
                self.failed = f"power {j + 1} too large ({dag_size(r)} nodes)"
                r = None
            if r is not None and not self._validate(r, comp, elim, deadline):
                self.failed = f"power {j + 1} could not be validated"
                r = None
            self.seconds += time.monotonic() - t0
            if r is None:
                break
            self.powers.append(z3.substitute(r, *zip(voc.x2, voc.x1)) if voc.x else r)   # (x, x'') -> (x, x')
        return len(self.powers) >= m

    def _validate(self, r: z3.BoolRef, comp: z3.BoolRef, elim: list[z3.ExprRef], deadline: Deadline) -> bool:
        """Second opinion on the direction soundness needs, by a different procedure (quantifier instantiation
        instead of the QE tactic): every pair of r is a real composition, `r ∧ ∀elim. ¬comp` unsat."""
        s = plain_solver(self.voc.ctx)
        s.add(r, z3.ForAll(elim, z3.Not(comp)))
        try:
            return check(s, deadline, cap=QE_CAP_SECONDS) == z3.unsat
        except (OutOfTime, GiveUp):
            return False

    def reach(self, S: z3.BoolRef, T: z3.BoolRef, m: int, deadline: Deadline
              ) -> tuple[int, list[tuple[int, State]]] | None:
        """Is T reachable from S in some k < 2^{m+1} steps? Returns (k, waypoints) for one real path, where
        waypoints are (step index, state) at the power boundaries (first = source, last = target), or None when
        no such path exists or the query is too slow (then `slow` is set). Requires `available(m)`."""
        voc = self.voc
        ctx = voc.ctx
        pts = [voc.step(10_000_000 + i) for i in range(m + 2)]      # a private range of step copies
        sel = [z3.Bool(f"tpa!pow{i}", ctx) for i in range(m + 1)]
        query = [voc.cur_to(S, pts[0])]
        for i in range(m + 1):
            if i == 0:
                e = voc.trans(pts[0], pts[1], "pwq0")
            else:
                e = voc.rel_to(self.powers[i - 1], pts[i], pts[i + 1])
            query.append(z3.If(sel[i], e, voc.identity(pts[i], pts[i + 1])))
        query.append(voc.cur_to(T, pts[m + 1]))
        s = self._decide(query, m, deadline)
        if s is None:
            return None
        model = s.model()
        k = 0
        waypoints = [(0, state_of(model, pts[0]))]
        for i in range(m + 1):
            if z3.is_true(model.eval(sel[i], model_completion=True)):
                k += 1 << i
                waypoints.append((k, state_of(model, pts[i + 1])))
        return k, waypoints

    def _decide(self, query: list[z3.BoolRef], m: int, deadline: Deadline) -> z3.Solver | None:
        """The solver holding a model of `query`, or None when it is unsat or no configuration answers in time
        (then `slow` is set: the booster is optional, and the caller recurses instead).

        Why two configurations: these queries (a selector per power, values near 2^32 in integer mode) are
        chaotic for z3. Measured on loop-invariants/eq2 at m = 32: the same query, built with its terms in two
        different orders, took 0.06 s and > 5 s with `z3.Solver()`, and 0.09 s and 1.65 s with the QF_LIA
        solver; neither order was hard for both. (The first configuration is now z3's plain core,
        `plain_solver`, as for TPA's other queries.)"""
        for logic in (None, "QF_LIA"):
            try:
                s = plain_solver(self.voc.ctx) if logic is None else z3.SolverFor(logic, ctx=self.voc.ctx)
                s.add(query)
                return s if check(s, deadline, cap=REACH_CAP_SECONDS) == z3.sat else None
            except (OutOfTime, GiveUp, z3.Z3Exception):
                if deadline.expired():
                    raise OutOfTime()
        self.slow = f"reachability query over E_0..E_{m} gave no answer within {REACH_CAP_SECONDS} s (twice)"
        return None


__all__ = ["ExactPowers"]
