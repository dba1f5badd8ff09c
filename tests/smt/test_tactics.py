"""`smt/tactics.py`: tactics under a deadline, and z3 work in a child that is killed at the deadline."""
from __future__ import annotations

import time

import z3

from helpers.wrap_chain import wrap_states
from looprover.deadline import Deadline
from looprover.smt.mbp import free_constants
from looprover.smt.tactics import apply, merged_bounds, run_killable
from looprover.smt.terms import dag_size


def _valid(f: z3.BoolRef) -> bool:
    s = z3.Solver()
    s.add(z3.Not(f))
    return s.check() == z3.unsat


def test_apply_runs_a_tactic_and_gives_up_past_the_deadline():
    x, y = z3.Ints("x y")
    f = z3.Exists([y], z3.And(x < y, y < 10))
    r = apply("qe2", f, Deadline.after(10))
    assert r is not None and _valid(r == (x < 9))
    assert apply(("simplify", "propagate-ineqs"), z3.And(x < 3, x < 5), Deadline.after(10)) is not None
    assert apply("qe2", f, Deadline(time.monotonic() - 1)) is None


def test_merged_bounds_merges_a_guard_unrolled_by_its_offsets():
    """QE of `x < n, x' = x + 1` twice-composed leaves `Not(n <= x), Not(n <= 1 + x), ...`: one bound on `n - x`
    whatever the offsets (they were kept apart, and TPA's powers doubled in size each level), and equivalent."""
    n, x, x1 = z3.Ints("n x x1")
    f = z3.And([z3.Not(n <= k + x) for k in range(8)] + [x1 == x + 8, x <= 100])
    r = merged_bounds(f, Deadline.after(10))
    assert _valid(r == f)
    assert dag_size(r) < dag_size(f) // 2 and len([a for a in r.children() if not z3.is_eq(a)]) == 2


def test_apply_answers_where_qsat_with_qel_does_not_stop():
    """With QEL on, qe2 ran over 60 s in z3's `term_graph::qel` on this formula despite a 1 s `TryFor`."""
    F, keep = wrap_states(20)
    elim = [c for c in free_constants(F) if not c.eq(keep[0])]
    r = apply("qe2", z3.Exists(elim, F), Deadline.after(20))
    assert r is not None and _valid(r == (keep[0] == 0))
    assert z3.get_param("smt.qsat_use_qel") == "true"      # restored afterwards


def test_run_killable_brings_back_the_callers_own_constants():
    ctx = z3.Context()
    x, y = z3.Int("x'", ctx), z3.Int("c0.nondet!1", ctx)
    b = z3.Bool("flag", ctx)
    f = z3.And(z3.Or(x + 2 * y > 3, b), y % 4 == 1)
    r = run_killable(lambda: f, ctx, Deadline.after(30))
    assert r is not None and r.ctx == ctx
    assert {c.get_id() for c in free_constants(r)} == {c.get_id() for c in free_constants(f)}
    s = z3.Solver(ctx=ctx)
    s.add(r != f)
    assert s.check() == z3.unsat


def test_run_killable_stops_a_job_that_ignores_every_limit():
    ctx = z3.main_ctx()

    def stuck() -> z3.BoolRef:
        time.sleep(3600)
        return z3.BoolVal(True, ctx)
    assert run_killable(stuck, ctx, Deadline.after(0.3)) is None
    assert run_killable(lambda: None, ctx, Deadline.after(10)) is None


def test_run_killable_reports_a_failing_job_as_no_answer():
    ctx = z3.main_ctx()

    def fails() -> z3.BoolRef:
        raise z3.Z3Exception("no")
    assert run_killable(fails, ctx, Deadline.after(10)) is None
