"""The `labmc` engine end to end on C programs: proofs through the abstraction, and unsafe programs for every
path that can yield TRUE (a wrong TRUE is the worst outcome). Programs: tests/helpers/programs (copies of the
shared acceptance examples plus our own). The transformation alone (reports, emitted C):
tests/transforms/test_labmc_transform.py."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from looprover.deadline import Deadline
from looprover.engines import get_engine, verify
from looprover.engines import labmc
from looprover.frontend.c import load_c_program
from looprover.transforms.labmc import LabmcOptions, abstract
from looprover.verdict import Status

PROGRAMS = Path(__file__).resolve().parents[1] / "helpers" / "programs"
MODES = pytest.mark.parametrize("bitvector", [False, True], ids=["int", "bv"])


def load(name: str):
    return load_c_program(PROGRAMS / name, "ILP32")


def run(name: str, bitvector=False, timeout=20.0, **opts):
    return verify("labmc", load(name), timeout=timeout, bitvector=bitvector,
                  settings=LabmcOptions(**opts) if opts else None)


SAFE = ["labmc_accel_safe.c", "labmc_counter_safe.c", "labmc_fragtest_safe.c", "labmc_induction_safe.c",
        "labmc_xmit_safe.c", "wrap_uchar_safe.c", "flag_safe.c", "induction_even_safe.c", "break_safe.c",
        "nested_safe.c", "flag_io_safe.c", "multipath_safe.c"]
# Every unsafe program must not be TRUE; those marked True must be confirmed FALSE quickly.
UNSAFE = [("labmc_accel_unsafe.c", True), ("wrap_uchar_unsafe.c", True), ("wrap_schar_unsafe.c", True),
          ("reset_unsafe.c", True), ("flag_unsafe.c", True), ("flag_io_unsafe.c", True), ("induction_unsafe.c", True),
          ("induction_base_unsafe.c", True), ("lastwriter_unsafe.c", True), ("io_unsafe.c", True),
          ("nested_unsafe.c", True), ("break_unsafe.c", True), ("array_unsafe.c", True),
          ("multipath_unsafe.c", True), ("partial_final_unsafe.c", True)]
SLOW = {"nested_safe.c", "labmc_accel_unsafe.c"}      # over 5 s in one mode on a loaded machine (--durations)


def _slow(name):
    return [pytest.mark.slow] if name in SLOW else []


# Proved by the abstraction, but the domains' candidates do not certify them (`evidence/certify.py`): u == 250 + i
# modulo 256 is no candidate. (In bit-vectors, fragtest's i + j == n needs n's upper bound, a guard constant
# above 2^20 that the candidates have since guards' constants are no longer capped.)
UNCERTIFIED = {("wrap_uchar_safe.c", False), ("wrap_uchar_safe.c", True)}


@MODES
@pytest.mark.parametrize("name", [pytest.param(n, marks=_slow(n)) for n in SAFE])
def test_safe_programs_are_proved(name, bitvector):
    v = run(name, bitvector)
    if (name, bitvector) in UNCERTIFIED:
        assert v.status == Status.UNKNOWN and v.reason.startswith(labmc.PROVED), v.reason
        assert "no certificate from the domains' invariants" in v.reason
        return
    assert v.status == Status.TRUE, v.reason
    assert v.reason.startswith(labmc.PROVED)
    assert v.evidence.kind == "k-induction" and v.evidence.check(load(name), bitvector, Deadline.never()) is None


@MODES
@pytest.mark.parametrize("name,confirmed", [pytest.param(*u, marks=_slow(u[0]), id=u[0]) for u in UNSAFE])
def test_unsafe_programs_are_never_true(name, confirmed, bitvector):
    v = run(name, bitvector)
    assert v.status != Status.TRUE, v.reason
    if confirmed:
        assert v.status == Status.FALSE, v.reason
        assert v.evidence.validated


def test_counter_needs_no_acceleration_and_accel_needs_acceleration():
    """labmc_counter_safe: output abstraction alone (i is IO and the exit variable). labmc_accel_safe: j is
    havocked without acceleration, so only the closed forms i = i0 + k, j = j0 + k prove it."""
    assert run("labmc_counter_safe.c", accelerate=False, exit_hint=False).status == Status.TRUE
    v = run("labmc_accel_safe.c", timeout=3.0, accelerate=False)
    assert v.status != Status.TRUE, v.reason
    assert run("labmc_accel_safe.c", accelerate=True).status == Status.TRUE


def test_wrong_classification_would_give_a_wrong_true(monkeypatch):
    """io_unsafe.c is FALSE (s == 6 when n == 3). Treating the IO variable s as a pure output (not havocked,
    not accelerated) makes the abstraction "prove" it: the test demonstrates that the classification is what
    stands between us and a wrong TRUE, that the real one does not give it, and that the certificate a TRUE
    needs stops the wrong one (UNKNOWN)."""
    import dataclasses
    import looprover.transforms.labmc as tl

    assert run("io_unsafe.c").status == Status.FALSE
    real = tl.classify

    def wrong(*args):
        cls = real(*args)
        s = next(v for v in cls.io if v.name == "s")
        return dataclasses.replace(cls, io=cls.io - {s}, po=cls.po | {s})

    monkeypatch.setattr(tl, "classify", wrong)
    _uncertified(run("io_unsafe.c"))


def _uncertified(v):
    """The unsound abstraction's TRUE, stopped by the certificate check."""
    assert v.status == Status.UNKNOWN and v.reason.startswith(labmc.PROVED), v.reason
    assert "no certificate" in v.reason


def test_bound_needs_the_final_iteration():
    """lastwriter_unsafe.c needs M = min(|PO|, #edges) + 1 = 2: the last writer of p and the final
    iteration. Capping M at 1 (the `max_bound` testing knob) would give a wrong TRUE (the certificate stops it);
    the real bound does not."""
    rep = abstract(load("lastwriter_unsafe.c")).loops[0]
    assert rep.bound == 2
    _uncertified(run("lastwriter_unsafe.c", max_bound=1))      # unsound on purpose
    assert run("lastwriter_unsafe.c").status == Status.FALSE


def test_bound_needs_the_last_complete_iteration_before_a_break():
    """partial_final_unsafe.c: p is written by every complete iteration but the final iteration breaks
    before writing it; M = 0 + 1 + 1. With M capped at 1 the abstraction "proves" it (the certificate stops it)."""
    rep = abstract(load("partial_final_unsafe.c")).loops[0]
    assert rep.classification.partial_exit and rep.bound == 2
    _uncertified(run("partial_final_unsafe.c", max_bound=1))      # unsound on purpose
    assert run("partial_final_unsafe.c").status == Status.FALSE


def test_induction_without_base_case_would_be_wrong():
    """induction_base_unsafe.c fails in iteration 1 only; the base copy is what finds it."""
    v = run("induction_base_unsafe.c")
    assert v.status == Status.FALSE
    res = abstract(load("induction_base_unsafe.c"))
    assert res.loops[0].induction


def test_deep_loop_time_does_not_depend_on_n(tmp_path):
    """deep_safe_N for N = 10 and 10^9: both proved, with an abstract loop of bound 1 (no unwinding)."""
    shutil.copy(PROGRAMS / "sv.h", tmp_path / "sv.h")
    text = (PROGRAMS / "deep_safe_N.c.in").read_text()
    for n in (10, 10**9):
        f = tmp_path / f"deep_{n}.c"
        f.write_text(text.replace("@N@", str(n)))
        prog = load_c_program(f, "ILP32")
        v = verify("labmc", prog, timeout=20)
        assert v.status == Status.TRUE, v.reason
        assert v.stats["abstract_bmc"]["bound"] == 1


def test_engine_is_registered():
    assert isinstance(get_engine("labmc"), labmc.LABMC)


def test_irreducible_is_unknown():
    from looprover.program.cfa import Assert, Assume, ProgramBuilder
    from looprover.program.expr import I32, cmp, const
    b = ProgramBuilder("irr")
    x = b.declare("x", I32, "nondet")
    l1, l2, ex = b.new_loc(), b.new_loc(), b.new_loc()
    b.add_edge(b.init, l1, Assume(cmp("<", x, const(0, I32))))
    b.add_edge(b.init, l2, Assume(cmp(">=", x, const(0, I32))))
    b.add_edge(l1, l2)
    b.add_edge(l2, l1)
    b.add_edge(l1, ex, Assert(cmp("!=", x, const(3, I32))))
    v = verify("labmc", b.build(ex), timeout=5)
    assert v.status == Status.UNKNOWN and "irreducible" in v.reason


def test_shared_examples(shared_dir):
    """The acceptance examples in the shared folder (the copies above may drift from them)."""
    ex = shared_dir / "examples"
    for f in sorted(ex.glob("labmc_*.c")):
        v = verify("labmc", load_c_program(f, "ILP32"), timeout=20)
        if "_safe" in f.name:
            assert v.status == Status.TRUE, (f.name, v.reason)
        else:
            assert v.status != Status.TRUE, (f.name, v.reason)


def test_loop_at_the_initial_location():
    """A CFA whose init is a loop header (possible for CHC inputs): the counter must still start at 0, so
    the transformation adds a fresh initial location. x starts arbitrary; while (x < 10) x++; x >= 10."""
    from looprover.program.cfa import Assert, Assign, Assume, ProgramBuilder
    from looprover.program.expr import I32, binary, cmp, const
    for bad, expected in ((10, Status.TRUE), (12, Status.FALSE)):
        b = ProgramBuilder("initloop")
        x = b.declare("x", I32)
        ex = b.new_loc()
        b.add_edge(b.init, b.init, Assume(cmp("<", x, const(10, I32))), Assign(x, binary("+", x, const(1, I32))))
        b.add_edge(b.init, ex, Assume(cmp(">=", x, const(10, I32))), Assert(cmp(">=", x, const(bad, I32))))
        prog = b.build(ex)
        res = abstract(prog)
        assert res.program.init != prog.init
        v = verify("labmc", prog, timeout=10)
        assert v.status == expected, v.reason
