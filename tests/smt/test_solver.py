"""z3 calls under deadlines and the portfolio's pauses (`smt/solver.py`)."""
from __future__ import annotations


import pytest
import z3

from looprover.deadline import Deadline, OutOfTime
from looprover.smt import solver as solver_mod
from looprover.smt.solver import check, check_unpaused


class _Clock:
    """The wall and CPU clocks `smt/solver.py` reads, advanced by the scripted solver: no sleeping, and no
    dependence on how loaded the machine is."""

    def __init__(self):
        self.wall = self.cpu = 0.0

    def monotonic(self):
        return self.wall

    def process_time(self):
        return self.cpu


@pytest.fixture
def clock(monkeypatch):
    c = _Clock()
    monkeypatch.setattr(solver_mod, "time", c)
    return c


class _Stub:
    """A solver whose answers are scripted: "sat", or ("asleep" | "busy", seconds) for a timeout after that
    long paused or working; it records the timeouts it is given."""

    def __init__(self, clock, script):
        self.clock, self.script, self.calls, self.timeouts = clock, list(script), 0, []

    def set(self, key, value):
        assert key == "timeout"
        self.timeouts.append(value)

    def check(self, *assumptions):
        self.calls += 1
        step = self.script.pop(0)
        if step == "sat":
            return z3.sat
        how, seconds = step
        self.clock.wall += seconds
        if how == "busy":
            self.clock.cpu += seconds
        return z3.unknown

    def reason_unknown(self):
        return "timeout"


def test_a_query_that_timed_out_while_the_process_was_paused_is_asked_again(clock):
    """The portfolio pauses engines with SIGSTOP and z3's timeout runs on the wall clock: a timeout that came
    while the process used (almost) no CPU is asked again; one that came from work is final."""
    paused = _Stub(clock, [("asleep", 0.3), "sat"])
    assert check_unpaused(paused) == z3.sat and paused.calls == 2
    worked = _Stub(clock, [("busy", 0.3), "sat"])
    assert check_unpaused(worked) == z3.unknown and worked.calls == 1


def test_capped_queries_are_asked_again_after_a_pause_each_time_with_the_cap(clock):
    """`check` with a cap below the time left (Houdini in summarize, TPA's powers, ranking synthesis) retries a
    timeout that came while paused, each try capped again; a timeout from work is final, and so is one of a
    query that had all the time left (the pause used up the deadline too) or that ran into the deadline."""
    paused = _Stub(clock, [("asleep", 0.3), "sat"])
    assert check(paused, Deadline.after(60), cap=1.0) == z3.sat and paused.calls == 2
    assert paused.timeouts == [1000, 1000]
    worked = _Stub(clock, [("busy", 0.3), "sat"])
    with pytest.raises(OutOfTime):
        check(worked, Deadline.after(60), cap=1.0)
    assert worked.calls == 1
    whole = _Stub(clock, [("asleep", 0.3), "sat"])
    with pytest.raises(OutOfTime):
        check(whole, Deadline.after(60))
    assert whole.calls == 1
    late = Deadline.after(60)

    class _Expiring(_Stub):
        def check(self, *assumptions):
            late.at = 0.0                   # the deadline passes during the query
            return super().check(*assumptions)
    expiring = _Expiring(clock, [("asleep", 0.3), "sat"])
    with pytest.raises(OutOfTime):
        check(expiring, late, cap=1.0)
    assert expiring.calls == 1


class _Seeded:
    """A z3 solver stand-in for `Solver.check_restarting`: answers unknown until its `random_seed` is in
    `good`, and records the timeouts it is given."""

    def __init__(self, good, log, why="canceled"):
        self.good, self.log, self.seed, self.why = good, log, 0, why

    def set(self, key, value):
        if key == "random_seed":
            self.seed = value
        else:
            self.log.append(value)

    def check(self, *assumptions):
        return z3.sat if self.seed in self.good else z3.unknown

    def reason_unknown(self):
        return self.why


def test_heavy_tailed_queries_restart_on_fresh_solvers_with_new_seeds_and_luby_caps():
    """A first try that does not answer within its cap (1 s) is followed by tries on a fresh solver (same
    assertions) with the next random seed and the next cap of Luby's sequence; the last try gets the time left,
    and its unknown is final."""
    assert [solver_mod.luby(i) for i in range(1, 16)] == [1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2, 4, 8]
    log: list[int] = []
    fresh = []
    good = {3}

    def new():
        fresh.append(_Seeded(good, log))
        return fresh[-1]
    s = solver_mod.Solver(Deadline.after(60), _Seeded(good, log))
    assert s.check_restarting(fresh=new) == z3.sat
    assert [x.seed for x in fresh] == [1, 2, 3]
    assert [round(ms / 1000) for ms in log] == [1, 1, 1, 2]
    log.clear()
    fresh.clear()
    good.clear()
    s = solver_mod.Solver(Deadline.after(10), _Seeded(good, log))
    assert s.check_restarting(fresh=new) == z3.unknown
    assert [round(ms / 1000) for ms in log] == [1] + [solver_mod.luby(i) for i in range(1, 31)] + [10]
    assert len(fresh) == 31


def test_restarts_end_after_the_solver_gave_up_three_times():
    """Unknowns that are not timeouts ("incomplete quantifiers") stop the restarts after the third: an engine
    that cannot decide the query ends instead of spinning to its deadline."""
    log: list[int] = []
    fresh = []

    def new():
        fresh.append(_Seeded(set(), log, "(incomplete quantifiers)"))
        return fresh[-1]
    s = solver_mod.Solver(Deadline.after(60), _Seeded(set(), log, "(incomplete quantifiers)"))
    assert s.check_restarting(fresh=new) == z3.unknown
    assert len(log) == 3 and len(fresh) == 2


def test_the_fast_assumption_check_assert_and_model_evaluation_agree_with_the_api():
    """`check_assuming`, `add_all` and `holds_in` skip the API's per-argument casts and result wrappers: the
    same answers, the same unsat cores, the same truth values."""
    from looprover.smt.solver import add_all, check_assuming, holds_in
    xs = [z3.Int(f"x{i}") for i in range(6)]
    lits = [z3.Bool(f"a{i}") for i in range(6)]
    facts = [z3.Implies(lits[i], xs[i] >= i) for i in range(6)] + [xs[2] + xs[4] <= 3]
    fast, api = z3.SimpleSolver(), z3.SimpleSolver()
    add_all(fast, facts)
    api.add(*facts)
    for chosen in ([0, 1], [2, 4], [1, 2, 3, 4, 5], []):
        got = check_assuming(fast, tuple(lits[i] for i in chosen))
        want = api.check(*(lits[i] for i in chosen))
        assert got == want
        if want == z3.unsat:
            assert {str(c) for c in fast.unsat_core()} == {str(c) for c in api.unsat_core()} == {"a2", "a4"}
        else:
            m = fast.model()
            for f in facts + [x >= 1 for x in xs]:
                assert holds_in(m, f) == z3.is_true(m.eval(f, model_completion=True))
    assert check_assuming(fast, (True,)) == z3.sat          # not a z3 Boolean: through the API's own check
