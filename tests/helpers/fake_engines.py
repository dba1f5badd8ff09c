"""Fake engines for CLI, deadline and portfolio tests (a plugin of tests/conftest.py, so the fixtures are there for
every test): they answer instantly (or hang, crash, raise), so the plumbing around the engines is tested without
depending on the real ones.

Each fake is a module in a temporary directory with an `Engine` subclass `Fake`, registered in
`looprover.engines.ENGINES`; `verify` and the portfolio fork their children, so they see the same registration.
"""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

FAKES = {
    "fake_true": """
        class Fake(Engine):
            name = "fake_true"

            def solve(self, program, task, options):
                return Verdict(Status.TRUE, "fake_true", "proved by fiat", evidence=AcceptedProof())
    """,
    "fake_true_no_proof": """
        class Fake(Engine):
            name = "fake_true_no_proof"

            def solve(self, program, task, options):
                return Verdict(Status.TRUE, "fake_true_no_proof", "proved, but nothing to show for it")
    """,
    "fake_unknown": """
        class Fake(Engine):
            name = "fake_unknown"

            def solve(self, program, task, options):
                return Verdict.unknown("fake_unknown", "gave up")
    """,
    "fake_false": """
        class Fake(Engine):
            name = "fake_false"

            def solve(self, program, task, options):
                steps = [TraceStep(e, e.src_loc, {"x": 1}) for e in program.edges[:2]]
                cex = Counterexample(steps, inputs=[7], validated=True, violated_at=SrcLoc("prog.c", 9))
                return Verdict(Status.FALSE, "fake_false", "violation at depth 2", evidence=cex)
    """,
    "fake_true_bad_proof": """
        class Fake(Engine):
            name = "fake_true_bad_proof"

            def solve(self, program, task, options):
                from looprover.evidence.proofs import KInductiveProof
                # plain 1-induction, no invariants: does not prove the counter (x=9, y=17 steps into Bad)
                return Verdict(Status.TRUE, "fake_true_bad_proof", "1-inductive", evidence=KInductiveProof(1))
    """,
    "fake_true_short_unwinding": """
        class Fake(Engine):
            name = "fake_true_short_unwinding"

            def solve(self, program, task, options):
                from looprover.engines.bmc import UnwindingProof
                # the counter's loop runs 10 times: "exhausted at bound 2" is a lie
                return Verdict(Status.TRUE, "fake_true_short_unwinding", "unwound", evidence=UnwindingProof(2))
    """,
    "fake_true_closed_run_lie": """
        class Fake(Engine):
            name = "fake_true_closed_run_lie"

            def solve(self, program, task, options):
                from looprover.evidence.proofs import ClosedRunProof
                # a lie on the unsafe counter: its only run reaches the violation
                return Verdict(Status.TRUE, "fake_true_closed_run_lie", "ran it", evidence=ClosedRunProof())
    """,
    "fake_false_deep_lie": """
        class Fake(Engine):
            name = "fake_false_deep_lie"

            def solve(self, program, task, options):
                from looprover.evidence.deep import RunCounterexample
                steps = [TraceStep(e, e.src_loc, {}) for e in program.edges[:2]]
                cex = RunCounterexample(steps, inputs=[], validated=True, length=10**6, omitted=10**6 - 2,
                                        omitted_at=1)
                return Verdict(Status.FALSE, "fake_false_deep_lie", "violation after 10^6 steps", evidence=cex)
    """,
    "fake_false_unvalidated": """
        class Fake(Engine):
            name = "fake_false_unvalidated"

            def solve(self, program, task, options):
                cex = Counterexample([], inputs=[], validated=False)
                return Verdict(Status.FALSE, "fake_false_unvalidated", "spurious?", evidence=cex)
    """,
    "fake_slow_true": """
        class Fake(Engine):
            name = "fake_slow_true"

            def solve(self, program, task, options):
                time.sleep(1.0)
                return Verdict(Status.TRUE, "fake_slow_true", "proved slowly", evidence=AcceptedProof())
    """,
    "fake_clock": """
        class Fake(Engine):
            name = "fake_clock"

            def solve(self, program, task, options):
                from looprover import deadline
                return Verdict.unknown("fake_clock", f"deadlines on a {type(deadline._clock).__name__}")
    """,
    "fake_hang": """
        class Fake(Engine):
            name = "fake_hang"

            def solve(self, program, task, options):
                options.report("hanging")
                while True:         # ignores its deadline, like a stuck solver
                    time.sleep(0.05)
    """,
    "fake_crash": """
        class Fake(Engine):
            name = "fake_crash"

            def solve(self, program, task, options):
                os._exit(3)
    """,
    "fake_abort": """
        class Fake(Engine):
            name = "fake_abort"

            def solve(self, program, task, options):
                import faulthandler
                faulthandler.disable()      # pytest's, inherited by the fork: no stack dump on stderr
                os.abort()          # how z3 dies when it cannot start a thread under --memory
    """,
    "fake_segv": """
        class Fake(Engine):
            name = "fake_segv"

            def solve(self, program, task, options):
                import faulthandler
                import signal
                faulthandler.disable()
                os.kill(os.getpid(), signal.SIGSEGV)     # an unchecked failed allocation in native code
    """,
    "fake_raise": """
        class Fake(Engine):
            name = "fake_raise"

            def solve(self, program, task, options):
                raise RuntimeError("engine bug")
    """,
    "fake_unsupported": """
        class Fake(Engine):
            name = "fake_unsupported"

            def solve(self, program, task, options):
                raise UnsupportedError("floating point", "prog.c:3")
    """,
    "fake_z3_evidence": """
        class Fake(Engine):
            name = "fake_z3_evidence"

            def solve(self, program, task, options):
                import z3
                return Verdict(Status.TRUE, "fake_z3_evidence", "invariant", evidence=z3.Int("x") >= 0,
                               stats={"inv": z3.Int("x") >= 0, "k": 3})
    """,
}

HEADER = """
import os, time
from looprover.engines.base import Engine
from looprover.errors import UnsupportedError
from looprover.program.cfa import SrcLoc
from looprover.verdict import Counterexample, Status, TraceStep, Verdict
from looprover.evidence.proofs import Proof


class AcceptedProof(Proof):
    kind = "fake"        # a certificate every check accepts: for tests of how a TRUE is rendered and scheduled

    def check(self, program, bitvector, deadline):
        return None

    def to_json(self):
        return {"kind": self.kind}
"""


@pytest.fixture
def fake_engines(tmp_path, monkeypatch):
    """Registers the fake engines; returns their names."""
    from looprover import engines
    pkg = tmp_path / "fakeengines"
    pkg.mkdir()
    for name, body in FAKES.items():
        (pkg / f"{name}.py").write_text(HEADER + textwrap.dedent(body))
    monkeypatch.syspath_prepend(str(pkg))
    for name in FAKES:
        monkeypatch.setitem(engines.ENGINES, name, f"{name}:Fake")
        sys.modules.pop(name, None)
    return list(FAKES)


COUNTER_SMT2 = """(set-logic HORN)
(declare-fun inv (Int Int) Bool)
(assert (forall ((x Int) (y Int)) (=> (and (= x 0) (= y 0)) (inv x y))))
(assert (forall ((x Int) (y Int) (x1 Int) (y1 Int))
  (=> (and (inv x y) (< x 10) (= x1 (+ x 1)) (= y1 (+ y 2))) (inv x1 y1))))
(assert (forall ((x Int) (y Int)) (=> (and (inv x y) (>= x 10) (not (= y 20))) false)))
(check-sat)
"""


@pytest.fixture
def chc_file(tmp_path) -> Path:
    """A small safe Horn-clause problem: loads without the C front-end."""
    f = tmp_path / "counter.smt2"
    f.write_text(COUNTER_SMT2)
    return f


@pytest.fixture
def unsafe_chc_program(tmp_path):
    """The counter with a reachable Bad (x ≥ 10 ∧ y = 20): a real counterexample of 11 clause steps."""
    from looprover.frontend.chc import load_chc_program
    f = tmp_path / "unsafe.smt2"
    f.write_text(COUNTER_SMT2.replace("(not (= y 20))", "(= y 20)"))
    return load_chc_program(f)


@pytest.fixture
def chc_program(chc_file):
    from looprover.frontend.chc import load_chc_program
    return load_chc_program(chc_file)
