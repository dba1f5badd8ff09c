"""The no-overflow property end to end (`jobs.verify_job`: instrumentation, engine, replay, report): every
signed operation overflowing and not, in both encodings; unsigned arithmetic, conversions and reach_error never
flagged; an overflow deep in a loop; a safe loop proved; undefined behaviour the definition leaves open is
UNKNOWN; the counterexample ends at the check with the operands' values; and, against gcc's
-fsanitize=signed-integer-overflow, the instrumented program fails a check on exactly the inputs where the
compiled program overflows; the 11 dev tasks with a no-overflow verdict are never wrong."""
from __future__ import annotations

import random

import pytest

from helpers.c_harness import overflow_agreement
from looprover.deadline import Deadline
from looprover.frontend.c import load_c_program
from looprover.jobs import Job, JobOptions, render, verify_job
from looprover.program.instrument import UNDECIDED
from looprover.properties import NO_OVERFLOW, Property
from looprover.verdict import Status

HEADER = """extern int __VERIFIER_nondet_int(void); extern unsigned int __VERIFIER_nondet_uint(void);
extern long long __VERIFIER_nondet_longlong(void); extern char __VERIFIER_nondet_char(void);
extern void __VERIFIER_assume(int); extern void reach_error(void); extern void abort(void);
"""


def check(tmp_path, body: str, engine: str = "bmc", bitvector: bool = False, timeout: float = 20.0):
    f = tmp_path / "p.c"
    f.write_text(HEADER + body)
    job = Job(f, Property(NO_OVERFLOW), "ILP32")
    verdict, program = verify_job(job, JobOptions(engine=engine, bitvector=bitvector), Deadline.after(timeout))
    return verdict, program, job


# one program per operation: (the overflowing statement, the assumption that makes it safe)
OPERATIONS = {
    "add": ("r = x + y;", "x < 1000 && x > -1000 && y < 1000 && y > -1000"),
    "discarded": ("x + y;", "x < 1000 && x > -1000 && y < 1000 && y > -1000"),
    "void": ("(void)(x * y);", "x < 46341 && x > -46341 && y < 46341 && y > -46341"),
    "comma": ("r = (x - y, 0);", "x >= 0 && y >= 0"),
    "sub": ("r = x - y;", "x >= 0 && y >= 0"),
    "mul": ("r = x * y;", "x < 46341 && x > -46341 && y < 46341 && y > -46341"),
    "div": ("r = x / y;", "y != 0 && x != -2147483647 - 1"),
    "mod": ("r = x % y;", "y > 0"),
    "neg": ("r = -x;", "x > -2147483647 - 1"),
    "shl": ("if (x >= 0) r = x << 3;", "x < 1000"),
    "inc": ("x++; r = x;", "x < 2147483647"),
    "compound": ("x *= 2; r = x;", "x < 100 && x > -100"),
}


def _op_program(stmt: str, assume: str | None) -> str:
    pre = f"  __VERIFIER_assume({assume});\n" if assume else ""
    return ("int main(void) {\n  int x = __VERIFIER_nondet_int(); int y = __VERIFIER_nondet_int(); int r = 0;\n"
            f"  if (y == 0) y = 1;\n{pre}  {stmt}\n  return r;\n}}\n") if "/" in stmt or "%" in stmt else \
        ("int main(void) {\n  int x = __VERIFIER_nondet_int(); int y = __VERIFIER_nondet_int(); int r = 0;\n"
         f"{pre}  {stmt}\n  return r;\n}}\n")


@pytest.mark.parametrize("name,bitvector", [
    pytest.param(n, bv, marks=[pytest.mark.slow] if bv and n in ("mul", "void") else [])   # proving a product
    for n in sorted(OPERATIONS) for bv in (False, True)])                                  # bit-precisely: ~9 s
def test_each_operation_overflowing_and_not(tmp_path, name, bitvector):
    stmt, safe = OPERATIONS[name]
    v, program, job = check(tmp_path, _op_program(stmt, None), bitvector=bitvector)
    assert v.status == Status.FALSE, (name, v.reason)
    cex = v.evidence
    assert cex.validated and cex.violated.prop == NO_OVERFLOW
    out = render(v, program, job, 0.0)
    assert out.json["result"] == "FALSE(no-overflow)"
    assert out.json["counterexample"]["overflow"]["operands"], out.json["counterexample"]
    assert "a signed overflow at" in "\n".join(out.text)
    # the bit-precise proof of a product, done twice (engine, then the job's check), takes ~5 s alone and
    # more than twice that on a loaded machine: it gets room, the others the usual 20 s
    slow = bitvector and name in ("mul", "void")
    v, _, _ = check(tmp_path, _op_program(stmt, safe), bitvector=bitvector, timeout=90.0 if slow else 20.0)
    assert v.status == Status.TRUE, (name, v.reason)


@pytest.mark.parametrize("bitvector", [False, True])
def test_unsigned_conversions_and_reach_error_are_not_overflows(tmp_path, bitvector):
    v, _, _ = check(tmp_path, """int main(void) {
  unsigned int u = __VERIFIER_nondet_uint(); unsigned int w = u * u + 4000000000u - u;
  int y = (int)4294967295u;                 /* implementation-defined conversion, not an overflow */
  char c = 127; c++;                        /* int arithmetic, then a conversion */
  signed char s = __VERIFIER_nondet_char(); s = s * s;
  if (w == 3) reach_error();                /* reachable, but not this property */
  return y + c > 1000 ? 1 : 0;
}
""", bitvector=bitvector)
    assert v.status == Status.TRUE, v.reason


def test_conditional_evaluation_is_respected(tmp_path):
    """`&&`, `||` and `?:` evaluate their second part only under their condition, pure or with effects."""
    v, _, _ = check(tmp_path, """int main(void) {
  int x = __VERIFIER_nondet_int(); int r = 0;
  if (x < 100 && x + 1 > 0) r = 1;
  if (x >= 100 || x + 1 > 0) r = 2;
  r = x < 100 ? x + 1 : 0;
  if (x < 100 && (r = x + 1) > 0) r = 3;     /* an assignment: control flow */
  return r;
}
""")
    assert v.status == Status.TRUE, v.reason
    v, _, _ = check(tmp_path, """int main(void) {
  int x = __VERIFIER_nondet_int(); int r = 0;
  if (x > 100 && x + 1 > 0) r = 1;
  return r;
}
""")
    assert v.status == Status.FALSE, v.reason


def test_overflow_deep_in_a_loop_is_found(tmp_path, gcc):
    """About 2.1 million iterations before the sum leaves int: acceleration finds it, a compiled run of the
    instrumented program confirms it."""
    body = """int main(void) {
  int x = 0;
  while (__VERIFIER_nondet_int()) { x = x + 1000; }
  return 0;
}
"""
    v, program, job = check(tmp_path, body, engine="accel")
    assert v.status == Status.FALSE and v.evidence.validated, v.reason
    assert render(v, program, job, 0.0).json["result"] == "FALSE(no-overflow)"


def test_safe_loop_is_proved(tmp_path, gcc):
    body = """int main(void) {
  int n = __VERIFIER_nondet_int(); int i = 0; int s = 0;
  while (i < n) { i++; if (s < 1000) s += 2; }
  return s;
}
"""
    for engine in ("kinduction", "spacer"):
        v, _, _ = check(tmp_path, body, engine=engine)
        assert v.status == Status.TRUE, (engine, v.reason)
    v, _, _ = check(tmp_path, body.replace("if (s < 1000) s += 2;", "s += 2;"), engine="accel")
    assert v.status == Status.FALSE, v.reason       # after 2^30 iterations


@pytest.mark.parametrize("stmt", ["r = x >> y;", "r = 7 / y;", "r = (x | -256) << 1;", "r = 1 << (y | 32);"])
def test_undefined_behaviour_the_definition_leaves_open_is_unknown(tmp_path, stmt):
    """A shift amount out of range, division by zero, a left shift of a negative value: UNKNOWN, never FALSE."""
    body = _op_program(stmt, None).replace("  if (y == 0) y = 1;\n", "")
    v, _, _ = check(tmp_path, body)
    assert v.status == Status.UNKNOWN and "does not classify" in v.reason, v.reason
    assert v.evidence is not None and not v.evidence.validated or v.evidence.violated.prop == UNDECIDED


@pytest.mark.parametrize("stmt", ["r = x >> y;", "r = 7 / y;", "r = x << y;"])
def test_the_same_operations_where_they_are_defined_are_proved(tmp_path, stmt):
    v, _, _ = check(tmp_path, _op_program(stmt, "y > 0 && y < 8 && x >= 5 && x < 99"))
    assert v.status == Status.TRUE, v.reason


def test_a_left_shift_out_of_range_is_an_overflow(tmp_path):
    v, _, _ = check(tmp_path, "int main(void) { int x = __VERIFIER_nondet_int(); __VERIFIER_assume(x >= 0);\n"
                              "  return x << 4; }\n")
    assert v.status == Status.FALSE and v.evidence.violated.prop == NO_OVERFLOW, v.reason


def test_64_bit_arithmetic(tmp_path):
    body = """int main(void) {
  long long a = __VERIFIER_nondet_longlong(); long long b = __VERIFIER_nondet_longlong();
  __VERIFIER_assume(a > 0 && a < 4000000000LL && b > 0 && b < 2000000000LL);
  long long p = a * b;
  return p > 0;
}
"""
    for bv in (False, True):
        v, _, _ = check(tmp_path, body, bitvector=bv)
        assert v.status == Status.TRUE, (bv, v.reason)
    v, _, _ = check(tmp_path, body.replace("2000000000LL", "4000000000LL"))
    assert v.status == Status.FALSE, v.reason


# ------------------------------------------------------------------------------- differential against gcc
def _random_program(rng: random.Random) -> str:
    """Straight-line int code over three inputs: + - * unary -, / and % by nonzero constants, ?: and &&."""
    vals = ["a", "b", "c"]
    lines = []
    for k in range(rng.randint(2, 5)):
        def atom():
            return rng.choice(vals + [str(rng.choice([1, 2, 3, 7, 1000, 65536, 2147483647]))])

        def var():          # one operand of each operation is a variable: gcc folds constant operations
            return rng.choice(vals)
        kind = rng.random()
        if kind < 0.55:
            e = f"{var()} {rng.choice(['+', '-', '*'])} {atom()}"
        elif kind < 0.65:
            e = f"-{var()}"
        elif kind < 0.75:
            e = f"{var()} {rng.choice(['/', '%'])} {rng.choice(['-1', '2', '-3'])}"
        elif kind < 0.88:
            e = f"{var()} < {atom()} ? {var()} + {atom()} : {var()} * {atom()}"
        else:
            e = f"({var()} > 0 && {var()} + {atom()} > 0)"
        lines.append(f"  int t{k} = {e};")
        vals.append(f"t{k}")
    return ("int main(void) {\n  int a = __VERIFIER_nondet_int(); int b = __VERIFIER_nondet_int();\n"
            "  int c = __VERIFIER_nondet_int();\n" + "\n".join(lines) + "\n  return 0;\n}\n")


def test_differential_against_gcc_sanitizer(tmp_path, gcc):
    """On random programs and inputs, the instrumented program fails a check iff gcc's
    -fsanitize=signed-integer-overflow reports an overflow in the compiled program."""
    rng = random.Random(11)
    agree = overflow_agreement(gcc, tmp_path, [_random_program(rng) for _ in range(12)], rng)
    assert agree[True] > 5 and agree[False] > 5, agree


# ------------------------------------------------------------------------------- the dev tasks
NO_OVERFLOW_TASKS = [
    "loop-invariants/eq2", "loop-invariants/even", "loop-invariants/linear-inequality-inv-b", "loop-invariants/mod4",
    "loop-invariants/odd", "loop-zilu/benchmark02_linear", "loop-zilu/benchmark04_conjunctive",
    "loop-zilu/benchmark11_linear", "termination-crafted-lit/PodelskiRybalchenko-LICS2004-Fig1",
    "termination-crafted-lit/Velroyen", "termination-crafted/McCarthy91_Iteration",
]


@pytest.mark.slow
def test_shared_no_overflow_tasks_are_never_wrong(shared_dir):
    """The 11 dev tasks with a no-overflow verdict (all `true`): never FALSE, and at least 9 proved (11 were on
    a loaded machine with the portfolio's 20 s)."""
    from looprover.bench.tasks import read_task_definition
    from looprover.jobs import resolve_job
    proved = 0
    for t in NO_OVERFLOW_TASKS:
        path = shared_dir / "benchmarks" / "svcomp" / f"{t}.yml"
        job = resolve_job(str(path), "no-overflow", None)
        assert job.expected is True and read_task_definition(path)
        v, _ = verify_job(job, JobOptions(engine="portfolio"), Deadline.after(20))
        assert v.status != Status.FALSE, (t, v.reason)
        proved += v.status == Status.TRUE
    assert proved >= 9, proved


def test_keeping_values_only_adds_discarded_pure_operations(tmp_path):
    """`keep_values` (used for this property) leaves a program whose values are all used or come from side
    effects unchanged (no copy of `i++` in a loop), and keeps a discarded pure operation as a temporary."""
    f = tmp_path / "k.c"
    f.write_text(HEADER + """int main(void) { int n = __VERIFIER_nondet_int(); int s = 0;
  for (int i = 0; i < n; i++) { s = s + 1; s++; }
  return 0; }
""")
    assert load_c_program(f, keep_values=True).edges == load_c_program(f).edges
    f.write_text(HEADER + "int main(void) { int n = __VERIFIER_nondet_int(); n * 2; return n + 1; }\n")
    kept = load_c_program(f, keep_values=True)
    assert len([v for v in kept.variables.values() if v.kind == "temp"]) == 2
    assert not [v for v in load_c_program(f).variables.values() if v.kind == "temp"]
