"""z3 tactics under a deadline: the one place where tactics are applied (QE, context simplification).

Why one place: a tactic stops at its `TryFor` limit only where z3's code checks that limit, and some code does
not. Measured with z3 5.4.0 on `∃aux. Tr ∧ wrap` of 20 chained `y += 3u` (issue 14: tpa ran 102 s on a 10 s
limit):
- `qe2` and `qe_rec` spent over 60 s in `mbp::term_graph::qel` (QSAT's model-based projection) on a 1 s
  `TryFor`; `Context.interrupt()` from a timer thread did not stop them either (qel never checks the limit);
- with QEL off (the global `smt.qsat_use_qel`, read when QSAT starts; tactics take no such parameter) `qe2`
  answered in 0.04 s, and at 400 increments gave up 0.02 s after its 3 s limit, but `qe_rec` still overran
  a 3 s limit by 3.9 s.
So `apply` runs one tactic in this process with QEL off under `TryFor` -- for the cheap first attempt, with
tactics seen to honour the limit -- and `run_killable` runs any z3 job in a forked child
(`processes.Child`) killed at the deadline, which stops everything and frees its memory; the child's formula
comes back as SMT-LIB text. Where no child can be started (no `fork`), the job runs here, limited only by
the `TryFor`s inside it.
"""
from __future__ import annotations

import multiprocessing as mp
from collections.abc import Callable, Sequence
from contextlib import contextmanager

import z3

from looprover.deadline import Deadline, OutOfTime
from looprover.errors import GiveUp
from looprover.processes import Child, forking
from looprover.smt.solver import check

__all__ = ["apply", "goals_formula", "merged_bounds", "run_killable"]

CHILD_MIN_SECONDS = 0.05   # below this a child is not worth starting (a fork costs tens of milliseconds)
_MAX_MS = 4_294_967_295    # z3 reads the limit as an unsigned int


def goals_formula(goals: z3.ApplyResult, ctx: z3.Context) -> z3.BoolRef:
    """The disjunction of a tactic's goals (each the conjunction of its formulas)."""
    # explicit contexts throughout: `z3.And([])` would silently build `true` in the *main* context
    disj = [z3.BoolVal(True, ctx) if len(g) == 0 else g[0] if len(g) == 1 else z3.And(list(g)) for g in goals]
    if not disj:
        return z3.BoolVal(False, ctx)
    return disj[0] if len(disj) == 1 else z3.Or(disj)


@contextmanager
def _qel_off():
    """QSAT without QEL for the duration (see the module docstring); the previous setting is restored, so
    Spacer and anything else reading the global keeps z3's default."""
    before = z3.get_param("smt.qsat_use_qel")
    z3.set_param("smt.qsat_use_qel", False)
    try:
        yield
    finally:
        z3.set_param("smt.qsat_use_qel", before)


def apply(tactic: str | Sequence[str], formula: z3.BoolRef, deadline: Deadline) -> z3.BoolRef | None:
    """`tactic` (a name, or names to run one after the other) on `formula` in this process under `TryFor` up
    to the deadline: the disjunction of the resulting goals (equivalent to `formula` only for an
    equivalence-preserving tactic such as QE; others promise equisatisfiability), or None when it failed or
    ran out of time. Use it for tactics that honour the limit; `run_killable` for the others."""
    left = deadline.left()
    if left <= 0:
        return None
    ctx = formula.ctx
    g = z3.Goal(ctx=ctx)
    g.add(formula)
    with _qel_off():
        try:
            tac = z3.Tactic(tactic, ctx=ctx) if isinstance(tactic, str) else z3.Then(*tactic, ctx=ctx)
            tac = z3.TryFor(tac, max(1, int(min(left * 1000, _MAX_MS))))
            return goals_formula(tac(g), ctx)
        except z3.Z3Exception:
            return None


def run_killable(job: Callable[[], z3.BoolRef | None], ctx: z3.Context, deadline: Deadline
                 ) -> z3.BoolRef | None:
    """`job()` in a forked child killed at the deadline: its formula (of `ctx`), or None when it returned
    None, failed, or was killed. The job should still bound its own parts (`apply`) so that one slow part
    leaves time for the next; the kill is what makes the deadline hold."""
    if not forking() or mp.current_process().daemon:   # a daemonic process may not have children
        try:
            return job()
        except z3.Z3Exception:
            return None
    left = deadline.left()
    if left < CHILD_MIN_SECONDS:
        return None
    child = Child("looprover-z3", _as_text, job)
    while not Child.wait([child], max(deadline.left(), 0.0)):
        if deadline.expired():      # else the wall-clock wait outlasted the deadline's clock: this process was
            child.kill()            # paused by the portfolio (`timeshare.ShareClock`), and so was the child
            return None
    ok, text = child.result()
    if not ok or text is None:
        return None
    s = z3.Solver(ctx=ctx)
    try:
        s.from_string(text)     # constants are identified by name and sort: the parent's own terms come back
    except z3.Z3Exception:
        return None
    fs = list(s.assertions())
    return fs[0] if len(fs) == 1 else z3.And(fs) if fs else z3.BoolVal(True, ctx)


def _as_text(job: Callable[[], z3.BoolRef | None]) -> str | None:
    """In the child: the job's formula as SMT-LIB (declarations and one assertion), None on failure."""
    try:
        f = job()
    except Exception:  # noqa: BLE001 -- the parent only needs "no answer"; a traceback would be noise
        return None
    if f is None:
        return None
    s = z3.Solver(ctx=f.ctx)
    s.add(f)
    return s.sexpr()


def merged_bounds(f: z3.BoolRef, deadline: Deadline) -> z3.BoolRef:
    """`f` with its redundant bounds merged (QE and projections along unrollings leave one bound per step: the
    guard `x < N` becomes 2^j bounds at TPA power j, and N > 0, N > 1, ..., N > k after k steps). Tactics only
    promise equisatisfiability, so the result is used only after a solver confirmed it equivalent to `f`.
    The bounds are first brought to one linear form per pair of terms (`arith_lhs`): `propagate-ineqs` merges
    `n - x >= 1` with `n - x >= 8`, but not `Not(n <= x)` with `Not(n <= 7 + x)` (measured: TPA's powers of
    `x < n, x++` grew 24, 32, 48, 80, 144, 272 nodes and stopped at power 7; now they stay at one bound)."""
    t = apply(("propagate-ineqs", "simplify"), z3.simplify(f, arith_lhs=True), deadline.cap(1.0))
    if t is None:
        return z3.simplify(f)
    s = z3.Solver(ctx=f.ctx)
    s.add(z3.Xor(f, t))
    try:
        if check(s, deadline, cap=1.0) == z3.unsat:
            return t
    except (OutOfTime, GiveUp):
        pass
    return z3.simplify(f)
