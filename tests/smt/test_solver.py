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
