"""z3 calls under deadlines and the portfolio's pauses (`smt/solver.py`)."""
from __future__ import annotations


class _Stub:
    """A solver whose answers are scripted: ('unknown', seconds asleep or busy, busy?) or 'sat'."""

    def __init__(self, script):
        self.script, self.calls = list(script), 0

    def check(self, *assumptions):
        import time
        import z3
        self.calls += 1
        step = self.script.pop(0)
        if step == "sat":
            return z3.sat
        _, seconds, busy = step
        end = time.monotonic() + seconds
        while busy and time.monotonic() < end:
            pass
        if not busy:
            time.sleep(seconds)
        return z3.unknown

    def reason_unknown(self):
        return "timeout"


def test_a_query_that_timed_out_while_the_process_was_paused_is_asked_again():
    """The portfolio pauses engines with SIGSTOP and z3's timeout runs on the wall clock: a timeout that came
    while the process used (almost) no CPU is asked again; one that came from work is final."""
    from looprover.smt.solver import check_unpaused
    import z3
    paused = _Stub([("unknown", 0.3, False), "sat"])
    assert check_unpaused(paused) == z3.sat and paused.calls == 2
    worked = _Stub([("unknown", 0.3, True), "sat"])
    assert check_unpaused(worked) == z3.unknown and worked.calls == 1


class _Settable(_Stub):
    """A scripted solver that records the timeouts it is given."""

    def __init__(self, script):
        super().__init__(script)
        self.timeouts = []

    def set(self, key, value):
        assert key == "timeout"
        self.timeouts.append(value)


def test_capped_queries_and_the_engines_solver_are_asked_again_after_a_pause():
    """`check` (capped queries: Houdini, TPA) and the unrolling engines' `Solver` retry a timeout that came while
    paused, each try with the time left capped again; a timeout from work, or at the deadline, is final."""
    import z3
    from looprover.deadline import Deadline, OutOfTime
    from looprover.smt.solver import Solver, check
    paused = _Settable([("unknown", 0.3, False), "sat"])
    assert check(paused, Deadline.after(60), cap=1.0) == z3.sat and paused.calls == 2
    assert paused.timeouts == [1000, 1000]
    worked = _Settable([("unknown", 0.3, True), "sat"])
    try:
        check(worked, Deadline.after(60), cap=1.0)
        raise AssertionError("a timeout from work must raise OutOfTime")
    except OutOfTime:
        assert worked.calls == 1
    engine = Solver(Deadline.after(60), _Settable([("unknown", 0.3, False), "sat"]))
    assert engine.check() == z3.sat and engine.z3.calls == 2
    late = Solver(Deadline.after(0.2), _Settable([("unknown", 0.3, False), "sat"]))
    assert late.check() == z3.unknown and late.z3.calls == 1       # the deadline passed: no retry
