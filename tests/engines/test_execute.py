"""The `execute` engine: TRUE only for a closed program whose one execution ends without a violation."""
from __future__ import annotations

import random
import shutil

import pytest

from looprover.engines import verify
from looprover.evidence.native import why_open
from looprover.program.cfa import Assign, Havoc, Program
from looprover.program.expr import BoolType, const
from looprover.program.interp import Oracle, run
from looprover.verdict import Status

from helpers.randprog import random_program

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")

HEADER = """
extern void abort(void);
void reach_error(void) {}
void __VERIFIER_assert(int c) { if (!c) { reach_error(); abort(); } }
extern int __VERIFIER_nondet_int(void);
extern void __VERIFIER_assume(int);
"""


def _c(tmp_path, body: str) -> Program:
    from looprover.frontend.c import load_c_program
    path = tmp_path / "t.c"
    path.write_text(HEADER + body + "\n")
    return load_c_program(path)


def test_a_closed_safe_program_with_a_million_iterations_is_true(tmp_path):
    p = _c(tmp_path, """int main(void) { int x = 0, y = 50000;
      while (x < 1000000) { if (x < 50000) x++; else { x++; y++; } }
      while (y > 0) { y--; x--; }
      __VERIFIER_assert(x == 0); return 0; }""")
    v = verify("execute", p, timeout=30)
    assert v.status == Status.TRUE, v.reason


def test_a_closed_unsafe_program_is_never_true(tmp_path):
    p = _c(tmp_path, """int main(void) { unsigned x = 0;
      while (x < 1000000u) x += 2;
      __VERIFIER_assert(x % 2); return 0; }""")
    v = verify("execute", p, timeout=30)
    assert v.status == Status.UNKNOWN and "reaches reach_error" in v.reason


def test_a_program_with_input_is_not_run(tmp_path):
    p = _c(tmp_path, """int main(void) { int n = __VERIFIER_nondet_int(); int x = 0;
      while (x < n) x++; __VERIFIER_assert(x >= 0); return 0; }""")
    v = verify("execute", p, timeout=30)
    assert v.status == Status.UNKNOWN and "reads input" in v.reason


def test_an_uninitialised_local_is_input(tmp_path):
    p = _c(tmp_path, """int main(void) { int x; __VERIFIER_assert(x != 7); return 0; }""")
    v = verify("execute", p, timeout=30)
    assert v.status == Status.UNKNOWN and "reads input (x" in v.reason   # the front-end havocs it


def test_signed_overflow_on_the_only_run_is_unknown(tmp_path):
    p = _c(tmp_path, """int main(void) { int x = 1;
      while (x > 0) x = x * 2;
      __VERIFIER_assert(0); return 0; }""")
    v = verify("execute", p, timeout=30)
    assert v.status == Status.UNKNOWN and "signal" in v.reason


def test_a_run_that_does_not_end_is_unknown_at_the_deadline(tmp_path):
    p = _c(tmp_path, """int main(void) { unsigned x = 0; while (1) { x++; } __VERIFIER_assert(0); return 0; }""")
    v = verify("execute", p, timeout=3)
    assert v.status == Status.UNKNOWN


def test_a_run_blocked_by_an_assumption_is_true(tmp_path):
    p = _c(tmp_path, """int main(void) { int x = 5; __VERIFIER_assume(x > 10);
      __VERIFIER_assert(0); return 0; }""")
    v = verify("execute", p, timeout=30)
    assert v.status == Status.TRUE, v.reason


def _close(program: Program, rng: random.Random) -> Program:
    """`program` with every havoc replaced by assignments of constants: one of its executions, made the only one."""
    def value(v):
        if isinstance(v.type, BoolType):
            return const(rng.random() < 0.5, v.type)
        return const(rng.randint(-3, 6) if v.type.signed else rng.randint(0, 6), v.type)

    def stmts(e):
        out = []
        for s in e.stmts:
            out += [Assign(v, value(v), s.src) for v in s.vars] if isinstance(s, Havoc) else [s]
        return tuple(out)
    return program.with_edges(type(e)(**{**{f: getattr(e, f) for f in e.__dataclass_fields__}, "stmts": stmts(e)})
                              for e in program.edges)


def test_random_closed_programs_agree_with_the_interpreter():
    """Soundness both ways on random loop programs made closed: TRUE exactly when the interpreter's run
    exits without a violation (and never when it reaches one)."""
    answered = 0
    for seed in range(30):
        p = _close(random_program(seed), random.Random(seed))
        if why_open(p) is not None:
            continue
        truth = run(p, Oracle(), max_steps=1_000_000)
        v = verify("execute", p, timeout=30)
        if truth.outcome == "violation":
            assert v.status != Status.TRUE, seed
        elif truth.outcome in ("exit", "blocked") and not truth.overflowed:
            assert v.status == Status.TRUE, (seed, v.reason)
            answered += 1
    assert answered >= 5


def test_the_true_hands_over_a_run_that_is_checked_again(tmp_path):
    """execute's TRUE carries a `ClosedRunProof`; the check runs the program again (interpreted when short,
    compiled when long) and fails, short or long, on a closed program that reaches reach_error."""
    from looprover.deadline import Deadline
    from looprover.evidence.proofs import ClosedRunProof
    safe = _c(tmp_path, "int main(void) { int x = 0; while (x < 10) x++; __VERIFIER_assert(x == 10); return 0; }")
    v = verify("execute", safe, timeout=30)
    assert v.status == Status.TRUE and isinstance(v.evidence, ClosedRunProof)
    assert v.evidence.check(safe, False, Deadline.after(30)) is None
    for n in (10, 1000000):     # interpreted, then compiled (beyond INTERPRETED_STEPS)
        unsafe = _c(tmp_path, f"int main(void) {{ int x = 0; while (x < {n}) x++; __VERIFIER_assert(x != {n});"
                              " return 0; }")
        why = ClosedRunProof().check(unsafe, False, Deadline.after(30))
        assert why is not None and ("violation" in why or "reach_error" in why), (n, why)
    opened = _c(tmp_path, "int main(void) { int x = __VERIFIER_nondet_int(); return x; }")
    assert "not closed" in ClosedRunProof().check(opened, False, Deadline.after(30))


def test_a_closed_program_with_a_dead_havoc_is_proved_and_the_proof_rechecked(tmp_path):
    """`int x, y;` then assignments: the front-end's havocs are never read, so the program is closed; execute's
    TRUE passes the portfolio's re-check (the interpreter gives the dead havocs any value)."""
    import time

    from looprover.deadline import Deadline
    from looprover.evidence.recheck import evidence_failure
    from looprover.frontend.c import load_c_program
    f = tmp_path / "p.c"
    f.write_text("extern void abort(void);\nvoid reach_error(void) { abort(); }\n"
                 "int main(void) {\n  int x, y;\n  x = 0;\n  y = 0;\n  while (x < 1000) { x++; y += 2; }\n"
                 "  if (y != 2000) reach_error();\n  return 0;\n}\n")
    program = load_c_program(str(f))
    v = verify("execute", program, timeout=30)
    assert v.status == Status.TRUE, v.reason
    assert evidence_failure(program, v, False, Deadline(time.monotonic() + 30)) is None
    f.write_text(f.read_text().replace("y != 2000", "y != 2002"))     # the unsafe twin: never TRUE
    assert verify("execute", load_c_program(str(f)), timeout=30).status == Status.UNKNOWN
