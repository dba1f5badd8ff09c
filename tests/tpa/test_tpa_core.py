"""TPA core on hand-built transition systems: verdicts, exact depths, and independently re-checked evidence.

Every SAFE is re-checked here with `check_safe_certificate` (fresh solvers, the TS as given) on top of the check
the engine already ran; every UNSAFE path is checked step by step against Tr with a fresh solver.
"""
from __future__ import annotations

import time

import pytest
import z3

from looprover.deadline import Deadline, OutOfTime
from looprover.tpa import (
    SafeCertificate, TPAOptions, TPAStatus, check_safe_certificate, check_state_invariant,
    replay_counterexample, solve_tpa,
)
from looprover.smt.ts import TransitionSystem
from looprover.tpa import core
from looprover.tpa.core import TPA
from looprover.tpa.split import make_tpa
from looprover.tpa.result import Vocabulary
from looprover.tpa.seeds import transitive_seeds
from helpers.wrap_chain import M, wrapped_adds
from helpers.tpa_systems import (
    bv_counter, counter, down_up, flag_counter, ints, nondet_step, phase_split, token_ring, triangular, two_speeds,
)

TIMEOUT = 60.0


def _deadline(seconds: float = 30.0) -> Deadline:
    return Deadline.after(seconds)


def assert_safe(ts, r):
    assert r.status == TPAStatus.SAFE, r.reason
    cert = r.certificate
    assert cert is not None and cert.checked
    assert check_safe_certificate(ts, cert, _deadline()) is None
    if cert.state_invariant is not None:
        assert check_state_invariant(ts, cert.state_invariant, _deadline()) is None
    return cert


def _holds(f: z3.BoolRef, subst) -> bool:
    s = z3.Solver()
    s.add(z3.substitute(f, *subst))
    return s.check() == z3.sat


def _val(v, val):
    if v.sort().kind() == z3.Z3_BOOL_SORT:
        return z3.BoolVal(val)
    if v.sort().kind() == z3.Z3_BV_SORT:
        return z3.BitVecVal(val, v.sort().size())
    return z3.IntVal(val)


def assert_path(ts, w):
    """The witness path, step by step: Init at 0, Tr between neighbours, Bad at the end."""
    path = w.path
    assert path is not None and len(path) == w.depth + 1
    pt = lambda vs, st: [(v, _val(v, x)) for v, x in zip(vs, st)]      # noqa: E731
    assert _holds(ts.init, pt(ts.state, path[0]))
    assert _holds(ts.bad, pt(ts.state, path[-1]))
    for a, b in zip(path, path[1:]):
        assert _holds(ts.trans, pt(ts.state, a) + pt(ts.next, b))
    assert path[0] == w.initial and path[-1] == w.final


def assert_unsafe(ts, r, depth: int | None = None):
    assert r.status == TPAStatus.UNSAFE, r.reason
    w = r.witness
    assert w is not None
    if depth is not None:
        assert w.depth == depth
    if w.path is not None:
        assert_path(ts, w)
    return w


# ------------------------------------------------------------------------------------------ deep counters
@pytest.mark.parametrize("N", [10, 1000, 10**6])
def test_safe_counter(N):
    ts = counter(N)
    r = solve_tpa(ts, timeout=TIMEOUT)
    assert_safe(ts, r)
    assert r.stats["level"] <= 2        # closes at once: independent of N


@pytest.mark.parametrize("N", [1000, 10**6])
def test_unsafe_counter_exact_depth(N):
    ts = counter(N, unsafe=True)
    r = solve_tpa(ts, timeout=TIMEOUT)
    w = assert_unsafe(ts, r, depth=N)
    assert w.initial == (0, 0) and w.final == (N, 2 * N)
    if N <= 2000:
        assert w.checked == "bmc"
    else:                                # too deep to unroll: initial state + waypoints for a replay
        assert w.path is None and w.waypoints[0] == (0, (0, 0)) and w.waypoints[-1] == (N, (N, 2 * N))
    assert r.stats["level"] == (N - 1).bit_length() - 1        # first level with 2^{n+1} ≥ N


@pytest.mark.slow
def test_unsafe_counter_plain_recursion():
    """Without exact powers the SAT answer is confirmed by the TPA recursion down to the base case."""
    N = 200
    ts = counter(N, unsafe=True)
    r = solve_tpa(ts, timeout=TIMEOUT, options=TPAOptions(exact_powers=False))
    assert_unsafe(ts, r, depth=N)
    assert r.stats["base_cases"] >= N // 2 and r.stats["power_queries"] == 0


@pytest.mark.parametrize("incremental", [True, False])
def test_solver_modes_agree(incremental):
    ts = counter(100, unsafe=True)
    r = solve_tpa(ts, timeout=TIMEOUT, options=TPAOptions(incremental=incremental, exact_powers=False))
    assert_unsafe(ts, r, depth=100)


# ------------------------------------------------------------------------------------------ nondeterminism
def test_nondet_step_safe():
    ts = nondet_step(1000, unsafe=False)
    assert_safe(ts, solve_tpa(ts, timeout=TIMEOUT))


@pytest.mark.slow
def test_nondet_step_unsafe():
    N = 1000
    ts = nondet_step(N, unsafe=True)
    r = solve_tpa(ts, timeout=TIMEOUT)
    w = assert_unsafe(ts, r)
    assert (N + 2) // 2 <= w.depth <= N          # any real path: steps of +1/+2 from 0 to N+1
    assert w.final == (N + 1,)


# ------------------------------------------------------------------------------------------ relational
def test_relational_sum():
    ts = down_up(1000)
    assert_safe(ts, solve_tpa(ts, timeout=TIMEOUT))


def test_relational_two_speeds():
    ts = two_speeds()
    assert_safe(ts, solve_tpa(ts, timeout=TIMEOUT))


def test_phase_split_safe():
    ts = phase_split()
    assert_safe(ts, solve_tpa(ts, timeout=TIMEOUT))


@pytest.mark.slow
def test_level_closing_during_a_deeper_query_ends_the_run(monkeypatch):
    """With the closure checks between top-level queries switched off, the only way to SAFE is a level that
    closes while a deeper query is still running (`TPA._reach`): the run ends there, with a checked
    certificate of that lower level (phase_split closed only after the deadline before this check existed)."""
    monkeypatch.setattr(TPA, "_fixed_point", lambda self, upto: None)
    ts = phase_split()
    r = solve_tpa(ts, timeout=TIMEOUT)
    cert = assert_safe(ts, r)
    assert cert.level < r.stats["level"]


def test_a_fixed_point_check_stopped_by_its_cap_is_tried_again(monkeypatch):
    """A closure check that runs past its cap finds nothing this time; the level is not marked as failed but
    checked again (with a doubled cap), so the run closes at the same level as without the interruption."""
    ts = counter(10)
    plain = assert_safe(ts, solve_tpa(ts, timeout=TIMEOUT))
    closure, stopped = TPA._closure, []

    def first_checks_run_out(self, i, side):
        if len(stopped) < 2:              # both sides of the first level checked
            stopped.append((i, side))
            raise OutOfTime()
        return closure(self, i, side)
    monkeypatch.setattr(TPA, "_closure", first_checks_run_out)
    r = solve_tpa(ts, timeout=TIMEOUT)
    cert = assert_safe(ts, r)
    assert stopped == [(plain.level, "right"), (plain.level, "left")] and r.stats["fixpoint_capped"] == 2
    assert cert.level == plain.level


def test_the_cap_of_fixed_point_checks_grows_until_they_can_answer(monkeypatch):
    """With a first cap no check can meet, the doubling cap still lets the safe counter be proved."""
    monkeypatch.setattr(core, "FIXPOINT_CAP", 1e-9)
    ts = counter(10)
    r = solve_tpa(ts, timeout=TIMEOUT)
    assert_safe(ts, r)
    assert r.stats["fixpoint_capped"] >= 1


@pytest.mark.parametrize("variant", ["basic", "split"])
def test_division_by_constants_is_searched_linearly_and_answered_on_the_original(variant):
    """x += 3 from 0 with q = x div 3 tracked: the search steps with Tr's div as auxiliary quotient and
    remainder; the safe query is proved and the unsafe one's path replays on the original Tr (`assert_path`)."""
    (x, q), (x1, q1) = ints("x", "q")
    tr = z3.And(x < 300, x1 == x + 3, q1 == x1 / 3)
    init = z3.And(x == 0, q == 0)
    safe = TransitionSystem([x, q], [x1, q1], init, tr, z3.And(x >= 300, q != 100))
    assert_safe(safe, solve_tpa(safe, timeout=TIMEOUT, options=TPAOptions(variant=variant)))
    unsafe = TransitionSystem([x, q], [x1, q1], init, tr, q == 77)
    assert_unsafe(unsafe, solve_tpa(unsafe, timeout=TIMEOUT, options=TPAOptions(variant=variant)), depth=77)


# ------------------------------------------------------------------------------------------ plain TPA
@pytest.mark.parametrize("make", [lambda: counter(4), lambda: down_up(3), two_speeds, token_ring],
                         ids=["counter4", "down_up3", "two_speeds", "token_ring"])
@pytest.mark.slow
def test_plain_tpa_without_seeds(make):
    """Interpolants alone (no seed lemmas) still reach a checked fixed point on small instances."""
    ts = make()
    r = solve_tpa(ts, timeout=TIMEOUT, options=TPAOptions(seeds=False))
    assert_safe(ts, r)
    assert r.stats["seeds"] == 0


PLAIN_VARIANTS = [dict(lemma_clauses=16), dict(itp_methods=("farkas-dec", "spacer", "mbp", "qe")),
                  dict(variant="split", lemma_clauses=16)]


@pytest.mark.parametrize("settings", PLAIN_VARIANTS, ids=["clauses", "farkas-dec", "split-clauses"])
def test_plain_tpa_variants_safe_and_unsafe(settings):
    """Lemmas split into clauses and decomposed Farkas interpolants keep TPA sound both ways: the safe
    counter gets a checked fixed point, the unsafe one its counterexample of exact depth."""
    options = TPAOptions(seeds=False, **settings)
    ts = counter(4)
    assert_safe(ts, solve_tpa(ts, timeout=TIMEOUT, options=options))
    ts = counter(12, unsafe=True)
    assert_unsafe(ts, solve_tpa(ts, timeout=TIMEOUT, options=options), depth=12)


# ------------------------------------------------------------------------------------------ Bool / bit-vectors
def test_bool_token_ring():
    ts = token_ring()
    assert_safe(ts, solve_tpa(ts, timeout=TIMEOUT))


def test_bool_flag_unsafe():
    ts = flag_counter(unsafe=True)
    w = assert_unsafe(ts, solve_tpa(ts, timeout=TIMEOUT), depth=7)
    assert w.final == (7, True)


def test_bool_flag_safe():
    ts = flag_counter(unsafe=False)
    assert_safe(ts, solve_tpa(ts, timeout=TIMEOUT))


def test_bitvector_counter_safe():
    ts = bv_counter(10, 11)
    r = solve_tpa(ts, timeout=TIMEOUT)
    assert r.status != TPAStatus.UNSAFE
    if r.status == TPAStatus.SAFE:
        assert_safe(ts, r)


def test_bitvector_counter_unsafe():
    ts = bv_counter(10, 10)
    r = solve_tpa(ts, timeout=TIMEOUT)
    assert r.status != TPAStatus.SAFE
    if r.status == TPAStatus.UNSAFE:
        assert_unsafe(ts, r, depth=10)


def test_nested_wraps_are_projected_by_the_model_first():
    """x' = x after 40 wrapping `+= 3` (integer-mode unsigned arithmetic): z3's own projection of Tr is
    exponential in that nesting and cannot be interrupted, so the base case resolves the ites by the model
    before projecting; the one-step counterexample (MAX - 49 + 120 wraps to 70) is still exact."""
    x, x1 = z3.Ints("x x'")
    ts = TransitionSystem([x], [x1], x == M - 50, x1 == wrapped_adds(x, 40), x < 100)
    assert not TPA(ts)._direct_mbp_of_tr and TPA(counter(10))._direct_mbp_of_tr
    assert_unsafe(ts, solve_tpa(ts, timeout=TIMEOUT), depth=1)


# ------------------------------------------------------------------------------------------ giving up
def test_no_simple_invariant_gives_up_by_deadline():
    """y = x(x+1)/2 never equals T_{10^6}+1, but no linear transition invariant shows it and the path to
    that value is 10^6 steps long: TPA must run out of time, not answer."""
    ts = triangular(10**6 * (10**6 + 1) // 2 + 1)
    t0 = time.monotonic()
    r = solve_tpa(ts, timeout=3.0)
    assert r.status == TPAStatus.UNKNOWN
    assert "deadline" in r.reason
    assert time.monotonic() - t0 < 3.0 + 2.5          # the deadline is honoured (soft: last check + cleanup)


def test_expired_deadline_is_unknown():
    r = solve_tpa(counter(10), deadline=Deadline.after(-1))
    assert r.status == TPAStatus.UNKNOWN


def test_out_of_memory_is_left_to_the_engine_runner(monkeypatch):
    """The --memory limit surfaces as MemoryError inside z3 calls; it is no search result of TPA's: it reaches
    the engine runner, which names it (tests/engines/test_tpa_engine.py)."""
    def boom(self):
        raise MemoryError()
    monkeypatch.setattr(TPA, "_solve", boom)
    with pytest.raises(MemoryError):
        solve_tpa(counter(10), timeout=TIMEOUT)


def test_aux_in_init_is_rejected():
    ts = counter(10)
    z = z3.Int("z")
    ts.init = z3.And(ts.init, z == 0)
    r = solve_tpa(ts, timeout=5)
    assert r.status == TPAStatus.UNKNOWN and "non-state" in r.reason


# ------------------------------------------------------------------------------------------ checkers
def test_certificate_checker_rejects_wrong_certificates():
    ts = counter(10)
    x, y = ts.state
    x1, y1 = ts.next
    good = SafeCertificate("right", z3.And(x1 >= x, y1 - y == 2 * (x1 - x), z3.Or(x > 10, x1 <= 10)), 1)
    assert check_safe_certificate(ts, good, _deadline()) is None
    for ti in (z3.BoolVal(True), x1 >= x, z3.And(x1 >= x, y1 - y == 2 * (x1 - x)), x1 == x):
        assert check_safe_certificate(ts, SafeCertificate("right", ti, 1), _deadline()) is not None
    assert check_safe_certificate(ts, SafeCertificate("left", z3.BoolVal(True), 1), _deadline()) is not None
    aux = z3.Int("aux")
    assert "non-state" in check_safe_certificate(ts, SafeCertificate("right", aux == x, 1), _deadline())


def test_counterexample_replay_rejects_wrong_depth():
    ts = counter(10, unsafe=True)
    ok = replay_counterexample(ts, 10, [(0, (0, 0)), (10, (10, 20))], _deadline())
    assert not isinstance(ok, str) and ok.depth == 10 and len(ok.path) == 11
    assert isinstance(replay_counterexample(ts, 9, [(0, (0, 0)), (9, (10, 20))], _deadline()), str)
    assert isinstance(replay_counterexample(ts, 11, [(0, (0, 0)), (11, (10, 20))], _deadline()), str)
    # deep claims are replayed per segment: a wrong segment is caught
    assert isinstance(replay_counterexample(ts, 10, [(0, (0, 0)), (2, (2, 4)), (4, (5, 10)), (10, (10, 20))],
                                            _deadline(), replay_limit=3), str)
    # a segment too long to unroll needs a validated exact power that holds between its ends
    x, y = ts.state
    x1, y1 = ts.next
    wp = [(0, (0, 0)), (2, (2, 4)), (6, (6, 12)), (8, (8, 16)), (10, (10, 20))]
    assert isinstance(replay_counterexample(ts, 10, wp, _deadline(), replay_limit=3), str)
    e1 = z3.And(x <= 8, x1 == x + 2, y1 == y + 4)
    e2 = z3.And(x <= 6, x1 == x + 4, y1 == y + 8)
    ok = replay_counterexample(ts, 10, wp, _deadline(), replay_limit=3, powers=[e1, e2])
    assert not isinstance(ok, str) and "exact powers" in ok.checked
    fake = z3.And(x1 == x + 4, y1 == y + 8)          # drops the guard: not an iterated composition of Tr
    assert "power 2" in replay_counterexample(ts, 10, wp, _deadline(), replay_limit=3, powers=[e1, fake])


def test_a_long_segment_is_split_through_the_powers_and_a_wrong_power_cannot_make_it_replay():
    """A 64-step claim with only its ends given is split at midpoints through E_5 and E_4 into pieces of
    DENSE_CHUNK steps, each unrolled on its own; the path is the real one. A "power" that is not Tr's (here
    E_j(x, x') with y doubling) gives midpoints no Tr path joins: the claim fails, it never passes."""
    from looprover.tpa import certify
    N = 64
    ts = counter(N, unsafe=True)
    x, y = ts.state
    x1, y1 = ts.next
    powers = [z3.And(x + 2 ** j <= N, x1 == x + 2 ** j, y1 == y + 2 ** (j + 1)) for j in range(1, 7)]
    wp = [(0, (0, 0)), (N, (N, 2 * N))]
    dense = certify._densified(Vocabulary(ts), wp, powers, 2000, _deadline())
    assert [i for i, _ in dense] == list(range(0, N + 1, certify.DENSE_CHUNK))
    ok = replay_counterexample(ts, N, wp, _deadline(), powers=powers)
    assert not isinstance(ok, str) and ok.path == [(i, 2 * i) for i in range(N + 1)]
    wrong = [z3.And(x1 == x + 2 ** j, y1 == 2 * y) for j in range(1, 7)]
    assert isinstance(replay_counterexample(ts, N, [(0, (0, 0)), (N, (N, 0))], _deadline(), powers=wrong), str)


def test_reset_query_reuses_levels():
    """Learned levels abstract Tr only: they stay valid for a new Init/Bad (Golem #148 was about this)."""
    ts = counter(100, unsafe=True)
    eng = TPA(ts)
    r1 = eng.solve(Deadline.after(TIMEOUT))
    assert r1.status == TPAStatus.UNSAFE and r1.witness.depth == 100
    x, y = ts.state
    eng.reset_query(z3.And(x == 50, y == 100), x >= 100)
    r2 = eng.solve(Deadline.after(TIMEOUT))
    assert r2.status == TPAStatus.UNSAFE and r2.witness.depth == 50 and r2.witness.initial == (50, 100)
    eng.reset_query(z3.And(x == 0, y == 0), z3.And(x >= 100, y != 200))
    r3 = eng.solve(Deadline.after(TIMEOUT))
    assert r3.status == TPAStatus.SAFE and r3.certificate.checked


def test_later_query_gets_seeds_for_its_bad_atoms():
    """A TPA whose TS has Init = Bad = false (a multi-loop network's loop) builds bound seeds from the Bad of each
    later query too (simple_1-2 of SV-COMP stayed UNKNOWN at 60 s when seeds came from the TS alone: its
    `x%2 = 0 ⇒ x'%2 = 0` came from a later Bad)."""
    (x, y), (x1, y1) = ints("x", "y")
    false = z3.BoolVal(False)
    eng = TPA(TransitionSystem([x, y], [x1, y1], false, z3.And(x < 1000, x1 == x + 1, y1 == y), false))
    eng.reset_query(z3.And(x == 0, y == 0), x >= 2000)
    assert eng.solve(Deadline.after(TIMEOUT)).status == TPAStatus.SAFE
    first = {c.get_id() for c in eng.seeds}
    assert not any("77" in str(c) for c in eng.seeds)
    eng.reset_query(z3.And(x == 0, y == 0), y >= 77)
    r = eng.solve(Deadline.after(TIMEOUT))
    assert r.status == TPAStatus.SAFE and r.certificate.checked
    later = [c for c in eng.seeds if c.get_id() not in first]
    assert any("77" in str(c) for c in later)
    assert all(any(c.eq(d) for d in eng.levels[1]) for c in later)      # the existing level got them too


def test_first_query_init_atoms_give_no_seeds():
    """Query Inits (MBP cubes in the network) are not seed sources: their bound atoms gave dozens of useless
    seeds and cost multiloop 11 CHC tasks."""
    (x, y), (x1, y1) = ints("x", "y")
    false = z3.BoolVal(False)
    eng = TPA(TransitionSystem([x, y], [x1, y1], false, z3.And(x < 1000, x1 == x + 1, y1 == y), false))
    eng.reset_query(z3.And(x == 0, y <= 31, y >= 31), x >= 2000)
    assert eng.solve(Deadline.after(TIMEOUT)).status == TPAStatus.SAFE
    assert not any("31" in str(c) for c in eng.seeds)


@pytest.mark.slow
def test_congruence_seed_proves_count_by_two():
    """i = 0; while (i < 10^6) i += 2; assert i == 10^6 (SV-COMP count_by_2): needs i' ≡ i (mod 2), a seed read
    off the step sizes of Tr's models (kinduction proved it, TPA did not)."""
    (i,), (i1,) = ints("i")
    ts = TransitionSystem([i], [i1], i == 0, z3.And(i < 10**6, i1 == i + 2), z3.And(i >= 10**6, i != 10**6))
    r = solve_tpa(ts, timeout=TIMEOUT)
    assert r.status == TPAStatus.SAFE and r.certificate.checked
    assert "%2" in str(r.certificate.ti)
    odd = TransitionSystem([i], [i1], i == 1, z3.And(i < 10**6, i1 == i + 2), z3.And(i >= 10**6, i != 10**6))
    r = solve_tpa(odd, timeout=TIMEOUT)
    assert r.status == TPAStatus.UNSAFE and r.witness.depth == 500000


def test_seed_union_stays_reflexive_and_transitive():
    """Seeds added for new atoms keep the union a reflexive, Tr-including, transitive relation -- the property
    that lets every level and both closure invariants carry them."""
    ts = counter(50)
    voc = Vocabulary(ts)
    x, y = ts.state
    known = transitive_seeds(voc, _deadline())
    new = transitive_seeds(voc, _deadline(), [y <= 7, x % 3 == 0, y >= x + 1], known=known, relational=False)
    assert new and not {c.get_id() for c in new} & {c.get_id() for c in known}
    R = z3.And(known + new)
    s = z3.Solver()
    s.add(z3.Or(voc.identity(voc.x, voc.x1), voc.trans(voc.x, voc.x1, "t")), z3.Not(R))
    assert s.check() == z3.unsat
    s = z3.Solver()
    s.add(R, voc.rel_to(R, voc.x1, voc.x2), z3.Not(voc.rel_to(R, voc.x, voc.x2)))
    assert s.check() == z3.unsat


# ------------------------------------------------------------------------------------------ determinism
DETERMINISM = """
import sys
sys.path.insert(0, {here!r})
from helpers.tpa_systems import nondet_step, down_up
from looprover.tpa import solve_tpa, TPAOptions
for mk in (lambda: nondet_step(50, True), lambda: down_up(3)):
    r = solve_tpa(mk(), timeout=60, options=TPAOptions(seeds=False))
    w = r.witness
    print(r.status.value, r.stats['lemmas'], r.stats['queries'], r.stats['interpolations'],
          w and w.depth, w and w.path)
"""


@pytest.mark.slow
def test_runs_are_deterministic():
    """The same command gives the same run: lemmas, query counts, counterexample path. (Interpolation runs in a
    fresh z3 context per call; the engine's own context is fresh per process. Within one process z3's models
    depend on the context's history -- term ids -- so this compares two processes, which is what users see.)"""
    import subprocess
    import sys
    from pathlib import Path
    code = DETERMINISM.format(here=str(Path(__file__).resolve().parents[1]))   # tests/, for helpers
    outs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
            for _ in range(2)]
    assert all(o.returncode == 0 for o in outs), outs[0].stderr
    assert outs[0].stdout == outs[1].stdout and "UNSAFE" in outs[0].stdout and "SAFE" in outs[0].stdout


def test_power_query_that_stalls_gives_up_the_booster_not_the_run(monkeypatch):
    """The exact-powers reachability query is optional: when no solver configuration answers it within its cap,
    `reach` returns None and marks the booster too slow (the caller recurses), unless the run's deadline itself
    has passed, which must still raise."""
    import looprover.tpa.powers as powers
    from looprover.deadline import OutOfTime
    ts = counter(10, unsafe=True)
    voc = Vocabulary(ts)
    ex = powers.ExactPowers(voc)
    assert ex.available(2, _deadline())
    x, _ = ts.state
    assert ex.reach(ts.init, x >= 3, 2, _deadline()) is not None      # answered normally first

    calls = []

    def stalls(s, deadline, *a, cap=None):
        calls.append(cap)
        raise OutOfTime()
    monkeypatch.setattr(powers, "check", stalls)
    assert ex.reach(ts.init, x >= 3, 2, _deadline()) is None
    assert ex.slow is not None and "no answer" in ex.slow
    assert len(calls) == 2 and all(c is not None for c in calls)      # two capped configurations, then done
    with pytest.raises(OutOfTime):
        ex.reach(ts.init, x >= 3, 2, Deadline.after(0.0))


def test_powers_below_a_failed_one_still_confirm_the_lower_levels(monkeypatch):
    """When the sequence of powers stops at E_2 (here: QE fails for E_3), a deep SAT answer recurses only down to
    the levels E_0..E_2 cover and confirms each piece there with one query, instead of going down to 2^n base
    cases (it went to the base cases: a nondet-bound C loop of 3,000 iterations took 53 s instead of 8 s)."""
    import looprover.tpa.powers as powers
    real_qe, calls = powers.qe, []

    def qe_fails_for_the_third_power(*a, **k):
        calls.append(1)
        if len(calls) >= 3:
            raise powers.QEError("test: no third power")
        return real_qe(*a, **k)
    monkeypatch.setattr(powers, "qe", qe_fails_for_the_third_power)
    N = 200
    ts = counter(N, unsafe=True)
    r = solve_tpa(ts, timeout=TIMEOUT)
    assert_unsafe(ts, r, depth=N)
    assert r.stats["powers_computed"] == 2 and "power 3" in r.stats["powers_stopped"]
    assert r.stats["base_cases"] == 0 and r.stats["power_confirmations"] >= N // 8


def test_a_power_after_one_near_the_size_cap_is_not_attempted(monkeypatch):
    """Powers grow from one to the next: once the last one is above `GROWTH_GUARD` nodes the sequence stops
    without running QE for the next (whose result would be over the cap after up to its time cap). The guard
    is set to 0 so the test does not depend on the sizes QE gives (they vary with the context's history)."""
    import looprover.tpa.powers as powers
    ts = nondet_step(50, True)
    assert powers.ExactPowers(Vocabulary(ts)).available(2, _deadline())
    qes = []
    real_qe = powers.qe
    monkeypatch.setattr(powers, "qe", lambda *a, **k: qes.append(1) or real_qe(*a, **k))
    monkeypatch.setattr(powers, "GROWTH_GUARD", 0)                   # E_1 is over the guard
    guarded = powers.ExactPowers(Vocabulary(ts))
    assert not guarded.available(2, _deadline())
    assert len(guarded.powers) == 1 and len(qes) == 1 and "not attempted" in guarded.failed


def test_short_paths_of_a_branching_relation_skip_the_powers(monkeypatch):
    """Below 2^FROM_LEVEL steps a relation with division or branches confirms its paths by the recursion (its
    powers' QE mostly fails at its cap or grows); a convex one still uses the powers at every length. All find
    the same 20-step counterexample."""
    import looprover.tpa.powers as powers
    i, x, i1, x1 = z3.Ints("i x i' x'")
    qes = []
    real_qe = powers.qe
    monkeypatch.setattr(powers, "qe", lambda *a, **k: qes.append(1) or real_qe(*a, **k))
    for update, convex in ((x + 2, True), (x + (x + 20) / 10, False), (z3.If(x > 7, x + 1, x + 2), False)):
        qes.clear()
        ts = TransitionSystem([i, x], [i1, x1], z3.And(i == 0, x == 0), z3.And(i < 20, i1 == i + 1, x1 == update),
                              i >= 20)
        tpa = TPA(ts, TPAOptions(seeds=False))
        assert tpa.powers.convex == convex
        assert tpa.powers.worth_it(powers.FROM_LEVEL) and tpa.powers.worth_it(1) == convex
        r = tpa.solve(_deadline())
        assert r.status == TPAStatus.UNSAFE and r.witness.depth == 20, r.reason
        assert (len(qes) > 0) == convex, (update, qes)


@pytest.mark.parametrize("text,want", [
    ("And(x1 == x + 1, x < 10)", True), ("And(x1 == 2 * x - y, Not(x >= 3))", True),
    ("And(x1 == If(x > 3, x, 0))", False), ("Or(x1 == x, x1 == y)", False), ("x1 != x", False),
    ("x1 == x / 2", False), ("x1 == x % 3", False), ("Not(And(x1 == x, y > 0))", False),
    ("And(x1 == x, Not(ForAll([y], y > x)))", False)])
def test_convex_relations(text, want):
    """`powers.convex` on formulas of each kind, a negated quantifier included (it is not an application)."""
    from looprover.tpa.powers import convex
    x, y, x1 = z3.Ints("x y x1")
    f = eval(text, {"And": z3.And, "Or": z3.Or, "Not": z3.Not, "If": z3.If, "ForAll": z3.ForAll,
                    "x": x, "y": y, "x1": x1})
    assert convex(f) == want


@pytest.mark.parametrize("variant", ["basic", "split"])
def test_safety_explanation_keeps_only_the_clauses_that_separate_bad(variant):
    """From the single start (a, c) = (0, 2) of a loop that moves a and c together, a = c is never reached. The
    explanation (the network's safe set on arrival) must cover every start with a < c, not only those near this
    one: a Farkas interpolant also keeps bounds like `c ≥ 2` that merely contradict this Init, and the
    explanation is widened by dropping such clauses while it stays apart from the runs towards Bad."""
    (a, c), (a1, c1) = ints("a", "c")
    ts = TransitionSystem([a, c], [a1, c1], z3.And(a == 0, c == 2), z3.And(a1 == a + 1, c1 == c + 1, c1 > 0),
                          a == c)
    tpa = make_tpa(ts, TPAOptions(variant=variant))
    r = tpa.solve(_deadline())
    assert_safe(ts, r)
    e = tpa.safety_explanation(r.certificate)
    assert _holds(z3.And(e, a == -9, c == -5), []) and _holds(z3.And(e, a == 40, c == 41), [])
    s = z3.Solver()
    s.add(ts.init, z3.Not(e))
    assert s.check() == z3.unsat                     # Init ⊆ E
    s = z3.Solver()
    s.add(e, a == c)
    assert s.check() == z3.unsat                     # no state of Bad is called safe
