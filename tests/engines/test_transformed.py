"""Transform, then engine (`engines/transformed.py`): answers carry over by the transform's guarantee only.

The fake transforms here replace the program by another one outright, so each rule is tested where it matters:
a TRUE of an under-approximation must not become a TRUE, a counterexample of the result must replay on the
original program before it is a FALSE."""
from __future__ import annotations

from typing import ClassVar

from helpers import enginecases as ec
from looprover.engines.base import Run, Task, run_engine
from looprover.engines.bmc import BMC
from looprover.engines.transformed import TransformThenEngine
from looprover.transforms.base import BackTranslation, Guarantee, Identity, RunOnInputs, Transform, Transformed
from looprover.verdict import Status


class Replace(Transform):
    """Claims `guarantee` for a program that is really `other` (a deliberately wrong transform)."""
    name = "replace"
    summary = "replacement"

    def __init__(self, other, guarantee, back=None):
        self.other, self.guarantee, self.back = other, guarantee, back or BackTranslation()

    def apply(self, program, settings=None):
        return Transformed(self.other, self.guarantee, self.back)


def compose(transform, confirm=None):
    class Composed(TransformThenEngine):
        name = "composed"
        inner: ClassVar = BMC()
    Composed.transform = transform
    Composed.confirm = confirm
    return Composed()


def solve(engine, program):
    return run_engine(engine, program, Task(), Run.with_timeout(20, max_bound=64))


def test_true_of_an_over_approximation_carries_over():
    v = solve(compose(Replace(ec.bounded_loop(True), Guarantee.OVER)), ec.bounded_loop(True))
    assert v.status == Status.TRUE and v.reason.startswith("replacement proved by BMC")


def test_true_of_an_under_approximation_proves_nothing():
    # the "under-approximation" is a safe program; the original is unsafe: a TRUE here would be wrong
    v = solve(compose(Replace(ec.bounded_loop(True), Guarantee.UNDER)), ec.bounded_loop(False))
    assert v.status == Status.UNKNOWN and "proves nothing" in v.reason


def test_a_counterexample_must_replay_on_the_original():
    # the result is unsafe, the original safe: its counterexample maps back (by inputs) to no violation
    v = solve(compose(Replace(ec.loopfree(False), Guarantee.OVER, RunOnInputs())), ec.loopfree(True))
    assert v.status == Status.UNKNOWN and "not confirmed" in v.reason
    # with BMC as the confirming engine, the original program is proved instead
    v = solve(compose(Replace(ec.loopfree(False), Guarantee.OVER, RunOnInputs()), confirm=BMC()), ec.loopfree(True))
    assert v.status == Status.TRUE and "spurious" in v.reason


def test_a_counterexample_that_replays_is_a_false():
    v = solve(compose(Identity()), ec.loopfree(False))
    assert v.status == Status.FALSE and v.evidence.validated
    v = solve(compose(Replace(ec.loopfree(False), Guarantee.OVER, RunOnInputs())), ec.loopfree(False))
    assert v.status == Status.FALSE and "confirmed by running the program" in v.reason
