"""`looprover check`: every run-time check of a program, one verdict each, on safe and unsafe programs; the
SARIF log valid against our schema of SARIF 2.1.0; bad input costs a clear answer, never a traceback."""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import jsonschema
import pytest

from looprover import cli
from looprover.jobs import Job
from looprover.program.cfa import Assert, Havoc
from looprover.program.model_exits import touching_note
from looprover.properties import UNMODELLED, default_property
from looprover.runtime_checks import (
    asserting, checked_program, checks_of, model_assumed, of_kinds, only, slicing_pays,
)
from looprover.transforms.slicing import slice_program

HEADER = """extern int __VERIFIER_nondet_int(void);
extern void abort(void);
void reach_error(void) { abort(); }
void __VERIFIER_assert(int cond) { if (!cond) { reach_error(); abort(); } }
"""
SCHEMA = json.loads((Path(__file__).parent / "sarif-2.1.0.schema.json").read_text())
SARIF = jsonschema.Draft202012Validator(SCHEMA, format_checker=jsonschema.FormatChecker())

# one check of each kind that fails (line: kind) and one of each that holds
MIXED = HEADER + """int ratio(int x) { return 100 / x; }
int main(void) {
  int a[10];
  int n = __VERIFIER_nondet_int();
  int s = 0;
  for (int i = 0; i < 10; i++) { a[i] = i; s += a[i]; }
  __VERIFIER_assert(s == 45);
  if (n > 0 && n <= 10) s = a[n];
  int y = ratio(n);
  int z = n + 1;
  __VERIFIER_assert(s >= 0);
  return 0;
}
"""


# only an execution that has already indexed out of bounds reaches the assertion
AFTER_AN_ERROR = HEADER + """int main(void) {
  int a[5];
  int n = __VERIFIER_nondet_int();
  if (n < 0) return 0;
  a[n] = 1;
  if (n >= 5) __VERIFIER_assert(0);
  return 0;
}
"""


def _check(tmp_path: Path, text: str, *more: str) -> dict:
    path = tmp_path / "p.c"
    path.write_text(text)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = cli.main(["check", str(path), "--json", "--check-timeout", "20", *more])
    assert code == cli.EXIT_VERDICT
    return json.loads(buf.getvalue())


def _by_line(result: dict) -> dict[tuple[int, str], str]:
    return {(c["line"], c["kind"]): c["status"] for c in result["checks"]}


def test_each_kind_of_check_is_violated_or_safe_on_its_own(tmp_path):
    sarif = tmp_path / "log.sarif"
    got = _check(tmp_path, MIXED, "--sarif", str(sarif))
    by_line = _by_line(got)
    assert by_line[(5, "undefined-operation")] == "violated"      # 100 / x with n == 0
    assert by_line[(12, "memory-access")] == "violated"           # a[10]
    assert by_line[(14, "signed-overflow")] == "violated"         # n + 1 with n == INT_MAX
    assert by_line[(10, "memory-access")] == "safe"
    assert by_line[(10, "signed-overflow")] == "safe"
    assert by_line[(11, "assertion")] == "safe" and by_line[(15, "assertion")] == "safe"
    violated = [c for c in got["checks"] if c["status"] == "violated"]
    assert all(c["inputs"] for c in violated)                     # the counterexample's nondet values
    assert got["summary"] == {"safe": len(got["checks"]) - 3, "violated": 3, "unknown": 0}
    log = json.loads(sarif.read_text())
    assert not [e.message for e in SARIF.iter_errors(log)]
    results = log["runs"][0]["results"]
    assert sorted(r["kind"] for r in results) == sorted("fail" if c["status"] == "violated" else "pass"
                                                         for c in got["checks"])
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert all(rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in results)


def test_each_violation_is_run_compiled_and_stops_at_its_check(tmp_path, gcc):
    """The compiled harness: the original program built by gcc with the sanitizers, fed each violation's inputs,
    stops at the violated check's line with an error of its kind (in the JSON, the text and the SARIF log)."""
    sarif = tmp_path / "log.sarif"
    got = _check(tmp_path, MIXED, "--sarif", str(sarif))
    violated = {c["line"]: c for c in got["checks"] if c["status"] == "violated"}
    assert set(violated) == {5, 12, 14}
    for line, c in violated.items():
        assert c["harness"]["reached_error"] is True, c
        assert f"p.c:{line}:" in c["harness"]["detail"] and "runtime error" in c["harness"]["detail"]
    assert "division by zero" in violated[5]["harness"]["detail"]
    assert all("harness" not in c for c in got["checks"] if c["status"] != "violated")
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    assert sum(1 for r in results if r["properties"].get("harness", {}).get("reached_error")) == 3


def test_a_run_that_reads_time_and_rand_is_run_compiled_all_the_same(tmp_path, gcc):
    """Juliet's tasks seed with `srand(time(0))` and call `__VERIFIER_error`, which looprover does not model:
    the harness links and runs them, says it did not feed `time`, and the fixed overflow reaches its check."""
    got = _check(tmp_path, """#include <stdlib.h>
#include <time.h>
void __VERIFIER_error(void);
void unused(void) { __VERIFIER_error(); }
int main(void) {
  int a[10];
  srand((unsigned)time(0));
  int r = rand();
  a[10] = r;
  return 0;
}
""", "--kinds", "memory-access")
    (check,) = [c for c in got["checks"] if c["status"] == "violated"]
    assert check["line"] == 9 and check["harness"]["reached_error"] is True, check
    assert "does not feed" in check["harness"]["detail"]


def test_an_overflowing_memcpy_reaches_its_check_through_the_sanitizer_s_own_frame(tmp_path, gcc):
    """ASan reports a `memcpy` overflow in its interceptor first: the program's own frame is the place."""
    got = _check(tmp_path, """#include <string.h>
int s[10];
int main(void) {
  int d[4];
  memcpy(d, s, sizeof s);
  return d[0];
}
""", "--kinds", "memory-access")
    violated = [c for c in got["checks"] if c["status"] == "violated"]
    assert [c["line"] for c in violated] == [5], got
    assert violated[0]["harness"]["reached_error"] is True, violated[0]
    assert "p.c:5: AddressSanitizer" in violated[0]["harness"]["detail"]


def test_a_double_free_reaches_its_free_check(tmp_path, gcc):
    """ASan names a double free `attempting double-free`: the whole name is the error, and it is the free
    check's kind."""
    got = _check(tmp_path, """#include <stdlib.h>
extern int __VERIFIER_nondet_int(void);
int main(void) {
  int *p = malloc(sizeof(int));
  free(p);
  if (__VERIFIER_nondet_int()) free(p);
  return 0;
}
""", "--kinds", "free")
    (check,) = [c for c in got["checks"] if c["status"] == "violated"]
    assert check["line"] == 6 and check["harness"]["reached_error"] is True, check
    assert "double-free" in check["harness"]["detail"]


def test_a_compiled_run_that_stops_elsewhere_does_not_reach_the_check(tmp_path, gcc):
    """A sanitizer error at another line, or of another kind at the check's line, is not the check's: the
    harness says so (and the verdict, which the harness never changes, stays as it was)."""
    from looprover.runtime_checks import Check, compiled_check
    from looprover.program.cfa import SrcLoc
    from looprover.deadline import Deadline
    from looprover.verdict import Counterexample
    path = tmp_path / "p.c"
    path.write_text("extern int __VERIFIER_nondet_int(void);\nint a[4];\n"
                    "int main(void) { int n = __VERIFIER_nondet_int();\n  a[n] = 1; return 100 / n; }\n")
    cex = Counterexample([], [7])
    here = Check("C1", "memory-access", SrcLoc(str(path), 4, 3), ())
    assert compiled_check(here, cex, [path], "ILP32", Deadline.after(30)).reached_error is True
    for other in (Check("C2", "memory-access", SrcLoc(str(path), 3, 3), ()),          # another line
                  Check("C3", "undefined-operation", SrcLoc(str(path), 4, 3), ())):   # another kind
        res = compiled_check(other, cex, [path], "ILP32", Deadline.after(30))
        assert res.reached_error is False and "p.c:4" in res.detail, res
    # two checks of the kind on the line, the column telling them apart neither: which one, the run cannot say
    twin = Check("C4", "memory-access", SrcLoc(str(path), 4, 99), ())
    res = compiled_check(here, cex, [path], "ILP32", Deadline.after(30), [here, twin])
    assert res.reached_error is None and "share the line" in res.detail, res


SAFE_TWIN = HEADER + """int main(void) {
  int a[10];
  int n = __VERIFIER_nondet_int();
  if (n < 1 || n > 9) return 0;
  int s = a[n] = 100 / n;
  __VERIFIER_assert(s >= 0);
  return n + 1;
}
"""


def test_a_safe_twin_has_every_check_safe(tmp_path):
    got = _check(tmp_path, SAFE_TWIN)
    assert got["checks"] and all(c["status"] == "safe" for c in got["checks"]), got
    # the interval pass shows the index, the divisor and the overflow, its invariants checked by z3
    # (`runtime_checks.interval_settled`); `s` is read back from the array, whose cells it does not track
    assert all("interval analysis" in c["reason"] and c["engine"] == "intervals"
               for c in got["checks"] if c["kind"] != "assertion"), got
    # without it, one proof of all the checks at once settles them (`runtime_checks.run_checks`)
    got = _check(tmp_path, SAFE_TWIN, "--no-intervals")
    assert got["checks"] and all(c["status"] == "safe" for c in got["checks"]), got
    assert all("open checks at once" in c["reason"] for c in got["checks"]), got


def test_the_interval_pass_settles_what_it_shows_and_leaves_the_rest_to_the_engine(tmp_path):
    """A bounded loop's accesses and a constant divisor are the interval pass's; `x == 8` needs `x == i`, two
    orderings the second pass keeps; `y == 16` needs `y == 2 i`, which goes on to the engine; a real violation
    too, found there."""
    got = _check(tmp_path, HEADER + """int main(void) {
  int a[8];
  int n = __VERIFIER_nondet_int();
  if (n < 0 || n > 100) return 0;
  int x = 0, y = 0;
  for (int i = 0; i < 8; i++) { a[i] = i / 2; x = x + 1; y = y + 2; }
  __VERIFIER_assert(x == 8 && y == 16);
  int k = a[n % 8] + 100 / 7;
  __VERIFIER_assert(k < 20);
  return a[n];
}
""")
    by_line = {(c["line"], c["kind"]): c for c in got["checks"]}
    assert by_line[(10, "memory-access")]["engine"] == "intervals"          # a[i]
    assert by_line[(12, "memory-access")]["engine"] == "intervals"          # a[n % 8]
    assert by_line[(11, "assertion")]["status"] == "safe"
    assert by_line[(11, "assertion")]["engine"] != "intervals"              # y == 16 needs y == 2 i
    assert by_line[(14, "memory-access")]["status"] == "violated"           # a[n], n up to 100
    assert all(c["status"] == "safe" for k, c in by_line.items() if k != (14, "memory-access")), got


def test_a_violation_through_a_global_written_in_another_function_is_found(tmp_path):
    """What the check depends on is written elsewhere (a slice of the program must keep it)."""
    got = _check(tmp_path, HEADER + """int g;
void set(int v) { g = v; }
int main(void) {
  int a[4];
  set(__VERIFIER_nondet_int() ? 4 : 0);
  a[g] = 1;
  return 0;
}
""")
    assert _by_line(got)[(10, "memory-access")] == "violated"


def test_a_global_written_in_another_function_keeps_a_safe_check_safe(tmp_path):
    """The safe twin: g stays within bounds, and only a slice that keeps `set`'s write proves it."""
    got = _check(tmp_path, HEADER + """int g = 9;
void set(int v) { g = v; }
int main(void) {
  int a[4];
  set(__VERIFIER_nondet_int() ? 3 : 0);
  a[g] = 1;
  return 0;
}
""")
    assert _by_line(got)[(10, "memory-access")] == "safe"


# a check that reads g, beside a loop it does not depend on
INDEPENDENT_LOOP = HEADER + """int g;
int h;
int main(void) {
  int a[4];
  for (int i = 0; i < 100000; i++) h = h + i % 3;
  g = __VERIFIER_nondet_int() ? 3 : 4;
  a[g] = 1;
  return h;
}
"""


def test_each_check_is_verified_on_its_slice_and_no_slice_turns_it_off(tmp_path):
    """The bounds check reads g only: its program is sliced to g's writes (the loop on h goes, so the engines
    find g = 4 at once), and the slice's counterexample is confirmed by running the whole program on its input.
    `--no-slice` verifies the check on the whole program (100,000 iterations before the bug)."""
    got = _check(tmp_path, INDEPENDENT_LOOP, "--kinds", "memory-access")
    (check,) = got["checks"]
    assert check["line"] == 11 and check["status"] == "violated", check
    assert check["inputs"] == [0] and "counterexample of the slice" in check["reason"]
    whole = _check(tmp_path, INDEPENDENT_LOOP, "--kinds", "memory-access", "--no-slice", "--check-timeout", "2")
    assert "slice" not in whole["checks"][0]["reason"]
    program = of_kinds(checked_program(Job(tmp_path / "p.c", default_property(), "ILP32")),
                       frozenset({"memory-access"}))
    assert slicing_pays(program)
    sliced, stats = slice_program(only(program, checks_of(program)[0]))
    assert not any("h" in {v.name for v in st.reads() | st.writes()} for e in sliced.edges for st in e.stmts
                   if not isinstance(st, Havoc)), "the loop on h is not in the check's slice"


def test_an_engine_that_does_not_check_assertions_settles_no_check(tmp_path):
    """`--engine termination` proves that loops end, not that checks hold: every check stays unknown (with the
    slicing wrapper around it, too: the wrapper refuses what its engine refuses)."""
    got = _check(tmp_path, HEADER + """int main(void) {
  int x = __VERIFIER_nondet_int();
  int y = __VERIFIER_nondet_int();
  while (y > 0 && y < 10 && x > -100 && x < 100) { y = y - 1; x = 100 / (x - y); }
  return 0;
}
""", "--engine", "termination", "--no-intervals")
    assert got["checks"] and all(c["status"] == "unknown" for c in got["checks"]), got


def test_a_check_speaks_of_executions_without_an_earlier_error(tmp_path):
    """Only an execution that has already indexed out of bounds reaches the assertion: the bounds check is
    violated, the assertion is not (what follows undefined behaviour is no verdict of a later check)."""
    got = _check(tmp_path, AFTER_AN_ERROR)
    assert _by_line(got)[(9, "memory-access")] == "violated"
    assert _by_line(got)[(10, "assertion")] == "safe"


def test_each_single_check_program_has_that_assertion_only_and_assumes_the_others(tmp_path):
    path = tmp_path / "p.c"
    path.write_text(MIXED)
    program = checked_program(Job(path, default_property(), "ILP32"))
    checks = checks_of(program)
    assert len({c.id for c in checks}) == len(checks) >= 8
    for c in checks:
        one = only(program, c)
        asserts = [(ei, si) for ei, e in enumerate(one.edges) for si, s in enumerate(e.stmts) if isinstance(s, Assert)]
        assert asserts == list(c.sites)
        assert sum(len(e.stmts) for e in one.edges) == sum(len(e.stmts) for e in program.edges)


def test_a_function_called_twice_has_one_check_per_source_place(tmp_path, capsys):
    """Inlining copies the callee's checks to each call; a check is the source place: violated if any call
    violates it, safe if none does."""
    path = tmp_path / "twice.c"
    path.write_text("extern int __VERIFIER_nondet_int(void);\nint a[4];\n"
                    "int get(int i) {\n  return a[i];\n}\n"
                    "int main(void) {\n  int k = __VERIFIER_nondet_int();\n  if (k < 0 || k > 3) return 0;\n"
                    "  return get(k) + get(k + LAST);\n}\n")
    for last, status in (("0", "safe"), ("1", "violated")):
        assert cli.main(["check", str(path), "-D", f"LAST={last}", "--json", "--kinds", "memory-access"]) == 0
        got = json.loads(capsys.readouterr().out)["checks"]
        assert [(c["line"], c["status"]) for c in got] == [(4, status)], got
        program = checked_program(Job(path, default_property(), "ILP32", cpp_flags=(f"-DLAST={last}",)))
        assert [len(c.sites) for c in checks_of(program) if c.src.line == 4 and c.kind == "memory-access"] == [2]


def test_checks_verified_together_assert_those_and_assume_the_others(tmp_path):
    path = tmp_path / "p.c"
    path.write_text(MIXED)
    program = checked_program(Job(path, default_property(), "ILP32"))
    checks = checks_of(program)
    some = {site for c in checks[::2] for site in c.sites}
    together = asserting(program, some)
    asserts = {(ei, si) for ei, e in enumerate(together.edges) for si, s in enumerate(e.stmts) if isinstance(s, Assert)}
    assert asserts == some
    assert [len(e.stmts) for e in together.edges] == [len(e.stmts) for e in program.edges]


def test_a_program_the_front_end_cannot_build_is_unknown_with_the_reason(tmp_path, capsys):
    path = tmp_path / "f.c"
    path.write_text("int main(void) { float x = 1.5f; return x > 1.0f; }\n")
    sarif = tmp_path / "log.sarif"
    assert cli.main(["check", str(path), "--sarif", str(sarif)]) == cli.EXIT_VERDICT
    out = capsys.readouterr().out
    assert out.startswith("UNKNOWN") and "float" in out, out
    log = json.loads(sarif.read_text())
    assert not [e.message for e in SARIF.iter_errors(log)]
    assert log["runs"][0]["invocations"][0]["executionSuccessful"] is False


def test_a_front_end_past_the_deadline_is_stopped(tmp_path):
    """The front-end has no deadline checks of its own: `check` builds the program in a child it stops."""
    import time
    from looprover.deadline import Deadline, OutOfTime
    from looprover.runtime_checks import checked_program_within
    path = tmp_path / "p.c"
    path.write_text("int main(void) { return 0; }\n")
    job = Job(path, default_property(), "ILP32")
    start = time.monotonic()
    with pytest.raises(OutOfTime):
        checked_program_within(job, Deadline(start))
    assert time.monotonic() - start < 5
    assert checked_program_within(job, Deadline(time.monotonic() + 60)).edges


@pytest.mark.parametrize("text,words", [("int main(void) { return 0 }\n", "p.c"),
                                         ("", "empty")])
def test_a_file_that_does_not_compile_is_one_error_line(tmp_path, capsys, text, words):
    path = tmp_path / "p.c"
    path.write_text(text)
    assert cli.main(["check", str(path)]) == cli.EXIT_INPUT_ERROR
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and words in err[0], err


def test_kinds_keeps_only_those_checks_and_assumes_none_of_the_others(tmp_path):
    """With `--kinds assertion` the out-of-bounds write is neither checked nor assumed: the assertion behind it
    is then reached (as `verify` of unreach-call reaches it), and violated."""
    got = _check(tmp_path, AFTER_AN_ERROR, "--kinds", "assertion")
    assert [(c["kind"], c["status"]) for c in got["checks"]] == [("assertion", "violated")]


@pytest.mark.parametrize("header", ["#include <assert.h>\n", "void assert(int);\n"])
def test_cs_assert_is_a_check_of_its_own(tmp_path, header):
    """`assert` from <assert.h> (its failure calls __assert_fail) or as a function the program leaves undefined:
    each is an assertion check; after a failing one the run ends (the access behind it is in bounds)."""
    got = _check(tmp_path, header + """extern int __VERIFIER_nondet_int(void);
int main(void) {
  int a[10];
  int n = __VERIFIER_nondet_int();
  if (n < 0 || n > 10) return 0;
  assert(n != 10);
  a[n] = 1;
  assert(n != 3);
  return 0;
}
""")
    assert [(c["line"], c["kind"], c["status"]) for c in got["checks"]] == [
        (7, "assertion", "violated"), (8, "memory-access", "safe"), (9, "assertion", "violated")]


# a struct reached through a pointer to a member of another struct: every access through `s` and `p` carries the
# model's own assertion that the pointer is at the start of an object it has (`properties.UNMODELLED_MEMBER`)
MEMBER_POINTER = HEADER + """struct seg { int begin; int size; };
struct joined { struct seg segment; int index; };
void next(struct seg *s) { s->begin = s->begin + s->size; s->size = 1; }
int main(void) {
  struct joined j;
  struct seg *p = &j.segment;
  p->begin = 0; p->size = 0;
  int x = 0;
  for (int i = 0; i < 8; i++) { next(p); x = x + 2; }
  __VERIFIER_assert(x == 16);
  WRITE
  __VERIFIER_assert(p->begin <= 8);
  return 0;
}
"""


def test_the_model_s_assertions_shown_by_the_interval_pass_are_assumed_by_the_later_runs(tmp_path):
    """Once the interval pass's checked proof shows the model's own assertions, the second pass and the engine's
    runs assume them (and say so), so a slice need not keep what they read (`runtime_checks.model_assumed`)."""
    got = _check(tmp_path, MEMBER_POINTER.replace("WRITE", ""))
    assert all(c["status"] == "safe" for c in got["checks"]), got
    by_engine = [c for c in got["checks"] if c["engine"] != "intervals" or "ordering" in c["reason"]]
    assert by_engine and all("model's own assertions assumed" in c["reason"] for c in by_engine), got
    # without the interval pass nothing shows them first: they stay assertions
    got = _check(tmp_path, MEMBER_POINTER.replace("WRITE", ""), "--no-intervals")
    assert not any("model's own assertions assumed" in c["reason"] for c in got["checks"]), got


def test_a_run_that_leaves_the_model_keeps_the_model_s_assertions_asserted(tmp_path):
    """An access through a pointer to a member past that member leaves the model: the interval pass cannot show
    the model's own assertions, so they are not assumed, and no check behind it is safe."""
    got = _check(tmp_path, MEMBER_POINTER.replace("WRITE", "if (__VERIFIER_nondet_int()) (&p->begin)[1] = 5;"))
    assert not any("model's own assertions assumed" in c["reason"] for c in got["checks"]), got
    assert _by_line(got)[(16, "assertion")] == "unknown", got
    # the interval pass still shows the checks no run that leaves the model at line 15 can reach (in next(),
    # called before it, and in the loop), with that assertion assumed
    assert _by_line(got)[(7, "memory-access")] == "safe" and _by_line(got)[(11, "memory-access")] == "safe"
    assert all(c["engine"] != "intervals" for c in got["checks"] if c["line"] >= 15), got


def test_model_assumed_turns_only_the_model_s_assertions_into_assumptions(tmp_path):
    path = tmp_path / "p.c"
    path.write_text(MEMBER_POINTER.replace("WRITE", ""))
    program = checked_program(Job(path, default_property(), "ILP32"))
    asserted = [s for e in program.edges for s in e.stmts if isinstance(s, Assert)]
    after = [s for e in model_assumed(program).edges for s in e.stmts if isinstance(s, Assert)]
    assert any(s.prop in UNMODELLED for s in asserted)
    assert after == [s for s in asserted if s.prop not in UNMODELLED]


def test_at_verifies_only_the_checks_on_those_lines(tmp_path, capsys):
    """`--at FILE:LINE`: a static analyser's alarms checked one by one; the ids are those of the whole run."""
    whole = {(c["line"], c["kind"]): c["id"] for c in _check(tmp_path, MIXED)["checks"]}
    got = _check(tmp_path, MIXED, "--at", "p.c:12", "--at", f"{tmp_path / 'p.c'}:5")
    assert {(c["line"], c["kind"]): c["status"] for c in got["checks"]} == {
        (12, "memory-access"): "violated", (5, "undefined-operation"): "violated"}
    assert all(whole[(c["line"], c["kind"])] == c["id"] for c in got["checks"])
    assert _check(tmp_path, MIXED, "--at", "other.c:12")["checks"] == []
    with pytest.raises(SystemExit) as exc:
        cli.main(["check", str(tmp_path / "p.c"), "--at", "p.c"])
    assert exc.value.code == 2 and "FILE:LINE" in capsys.readouterr().err


# `c` counts some of the iterations of a loop to a limit the program reads: only `c <= i` and `i < n` bound it
COUNTED = HEADER + """int main(void) {
  int n = __VERIFIER_nondet_int();
  int i = 0, c = 0;
  while (i < n) {
    if (__VERIFIER_nondet_int()) STEP;
    i++;
  }
  return c;
}
"""


def test_orderings_kept_by_houdini_settle_an_overflow_the_intervals_leave_open(tmp_path):
    """The second pass (`absint/relations.py`): `c <= i` and `i <= n` are inductive with the interval states,
    so `c++` cannot overflow; the proof (states and orderings) is checked by z3 like the first pass's."""
    got = _check(tmp_path, COUNTED.replace("STEP", "c++"))
    (inc,) = [c for c in got["checks"] if c["line"] == 9]
    assert inc["status"] == "safe" and inc["engine"] == "intervals" and "ordering" in inc["reason"], got


def test_the_unsafe_twin_is_not_settled_by_orderings(tmp_path):
    """`c += 2` breaks `c <= i`: no ordering shows it, and it is not safe (it overflows after 2^30 steps)."""
    got = _check(tmp_path, COUNTED.replace("STEP", "c += 2"), "--check-timeout", "3")
    (inc,) = [c for c in got["checks"] if c["line"] == 9]
    assert inc["status"] != "safe" and "ordering" not in inc["reason"], got


def test_an_assertion_two_orderings_show_is_settled_by_the_second_pass(tmp_path):
    """`x == 8` after a loop that moves `x` with `i`: `x <= i` and `i <= x` are inductive with the intervals."""
    got = _check(tmp_path, HEADER + """int main(void) {
  int x = 0;
  for (int i = 0; i < 8; i++) x = x + 1;
  __VERIFIER_assert(x == 8);
  return 0;
}
""")
    (a,) = [c for c in got["checks"] if c["kind"] == "assertion"]
    assert a["status"] == "safe" and a["engine"] == "intervals" and "2 orderings" in a["reason"], got


# a function with a construct the front-end refuses (a struct viewed as bytes), called on one path of main
REFUSED_ON_A_PATH = """extern int __VERIFIER_nondet_int(void);
struct S { int a; int b; };
struct S s;
int bad(int k) {
  unsigned char *p = (unsigned char *)&s;
  p[k] = 0;
  return 1;
}
int helper(int x) { return 100 / x; }
int main(void) {
  int a[10];
  int n = __VERIFIER_nondet_int();
  if (n < 0 || n >= 10) return 0;
  a[n] = 1;
  int y = 100 / n;
  if (n == 5) {
    bad(n);
    a[n + 5] = 2;
  }
  a[n] = helper(n + 1);
  return 0;
}
"""


def test_a_refused_function_costs_only_the_checks_it_can_touch(tmp_path):
    """The checks before the refused call are answered (safe, violated); every check a run can reach after the
    call -- after it on the CFA, or in code it calls (helper, called later) -- is unknown, naming the construct;
    the refusal is in the JSON and the SARIF log, and `verify` still refuses the program as a whole."""
    sarif = tmp_path / "log.sarif"
    got = _check(tmp_path, REFUSED_ON_A_PATH, "--sarif", str(sarif))
    by_line = _by_line(got)
    assert by_line[(14, "memory-access")] == "safe"
    assert by_line[(15, "undefined-operation")] == "violated"
    after = [c for c in got["checks"] if c["line"] in (9, 18, 20)]
    assert after and all(c["status"] == "unknown" and "refuses" in c["reason"] and "p.c:5" in c["reason"]
                         for c in after), after
    assert not [c for c in got["checks"] if c["line"] in (5, 6)]    # the refused code has no checks listed
    assert len(got["refused"]) == 1 and "p.c:17" in got["refused"][0] and "p.c:5" in got["refused"][0]
    log = json.loads(sarif.read_text())
    assert not [e.message for e in SARIF.iter_errors(log)]
    notes = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert [n["level"] for n in notes] == ["warning"]
    path = tmp_path / "p.c"
    assert cli.main(["verify", str(path), "--property", "valid-memsafety"]) == cli.EXIT_VERDICT


def test_an_unknown_check_names_the_refused_call_before_it(tmp_path):
    """Whatever the engines say of a check a refused call can touch (a timeout, too), its unknown names the call
    and the construct; a check no refused call touches gets no such note."""
    path = tmp_path / "p.c"
    path.write_text(REFUSED_ON_A_PATH)
    program = checked_program(Job(path, default_property(), "ILP32"))
    notes = {(c.src.line, c.kind): touching_note(program, c.sites) for c in checks_of(program)}
    assert notes[(14, "memory-access")] == "" and notes[(15, "undefined-operation")] == ""
    assert "after the call at" in notes[(18, "memory-access")] and "p.c:17" in notes[(18, "memory-access")]
    assert "pointer conversion" in notes[(20, "memory-access")]


@pytest.mark.parametrize("text,line", [
    # g's access is safe where main calls it, out of bounds where the refused function does
    ("""struct S { int a; };
struct S s;
int g(int *a, int i) { return a[i]; }
int bad(int *a) {
  unsigned char *p = (unsigned char *)&s;
  p[0] = 0;
  return g(a, 20);
}
int main(void) {
  int a[10] = {0};
  g(a, 3);
  bad(a);
  return 0;
}
""", 3),
    # the access comes before the refused call in its iteration, after it in the next
    ("""struct S { int a; };
struct S s;
void bad(void) {
  unsigned char *p = (unsigned char *)&s;
  p[0] = 0;
}
int main(void) {
  int a[10];
  for (int i = 0; i < 10; i++) {
    a[i] = 0;
    if (i == 7) bad();
  }
  return 0;
}
""", 10)])
def test_a_check_a_refused_call_can_reach_is_never_safe(tmp_path, text, line):
    """Through the code the refused call runs (g's copy where main calls it is safe in the model), or around a
    loop: the check is unknown, where taking the refused call for the end of every run would make it safe."""
    got = _check(tmp_path, text)
    at = [c for c in got["checks"] if c["line"] == line and c["kind"] == "memory-access"]
    assert at and all(c["status"] == "unknown" and "refuses" in c["reason"] for c in at), got["checks"]


VOID_BYTES = """extern int __VERIFIER_nondet_int(void);
struct ctx { unsigned int h[4]; int n; };
static void wipe(void *secret, unsigned long size) {
  volatile unsigned char *v = (unsigned char *)secret;
  for (unsigned long i = 0; i < size; i++) v[i] = 0;
}
int main(void) {
  struct ctx c; int a[10];
  int n = __VERIFIER_nondet_int();
  if (n < 0 || n >= 10) return 0;
  a[n] = 1;
  int y = 100 / n;
  c.n = n;
  if (n == 5) { wipe(&c, sizeof c); a[n] = 3; }
  a[n] = y;
  return 0;
}
"""


def test_a_void_pointer_read_as_bytes_of_a_struct_costs_only_the_checks_after_it(tmp_path):
    """Monocypher wipes its context structs through `(u8 *)secret`, a view the model does not have: under `check`
    that conversion is a model exit, so the checks before it are answered and those a run reaches after it stay
    unknown naming it (wipe's own access too); `verify` still refuses the program."""
    got = _check(tmp_path, VOID_BYTES)
    by_line = _by_line(got)
    assert by_line[(11, "memory-access")] == "safe"
    assert by_line[(12, "undefined-operation")] == "violated"
    after = [c for c in got["checks"] if c["line"] in (5, 14, 15)]
    assert len(after) == 3 and all(c["status"] == "unknown" and "void *" in c["reason"] and "p.c:4" in c["reason"]
                                   for c in after), after
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert cli.main(["verify", str(tmp_path / "p.c"), "--property", "valid-memsafety", "--json"]) == \
            cli.EXIT_VERDICT
    data = json.loads(buf.getvalue())
    assert data["status"] == "UNKNOWN" and "void *" in data["reason"], data


def test_equal_operands_with_arithmetic_keep_their_checks(tmp_path):
    """A review's counterexample: folding `x + 1 == x + 1` to true (as the id comparisons of `resolved_ids` are)
    dropped the addition before `check` instrumented it, so its overflow and the division after it had no check."""
    got = _check(tmp_path, "extern int __VERIFIER_nondet_int(void);\n"
                           "void f(void) { int l; int *p = &l; *p = 0; }\n"
                           "int main(void) {\n  int x = __VERIFIER_nondet_int(), y = __VERIFIER_nondet_int();\n"
                           "  f();\n  if (x + 1 == x + 1) return 0;\n  if (x / y != x / y) return 2;\n  return 1;\n}\n")
    by_line = _by_line(got)
    assert by_line[(6, "signed-overflow")] == "violated", got["checks"]
    assert (7, "undefined-operation") in by_line, got["checks"]


def test_memory_running_out_mid_way_keeps_what_is_settled_and_leaves_the_rest_unknown(tmp_path, monkeypatch):
    """A MemoryError while the engines run (as `--memory` makes it) costs the checks not settled yet: they are
    unknown (out of memory), the interval pass's safe checks stand, and the output is the usual one."""
    import looprover.runtime_checks as rc

    def no_memory(*args, **kwargs):
        raise MemoryError()
    monkeypatch.setattr(rc, "checked_verdict", no_memory)
    got = _check(tmp_path, HEADER + """int main(void) {
  int a[8];
  int n = __VERIFIER_nondet_int();
  for (int i = 0; i < 8; i++) a[i] = i;
  return a[n];
}
""")
    by_line = {(c["line"], c["kind"]): c for c in got["checks"]}
    assert by_line[(8, "memory-access")]["status"] == "safe"                 # a[i]: the interval pass
    assert by_line[(9, "memory-access")]["status"] == "unknown"
    assert by_line[(9, "memory-access")]["reason"].startswith("out of memory")
    assert got["summary"]["safe"] >= 1 and got["summary"]["unknown"] >= 1


def test_a_memory_limit_too_small_to_load_is_unknown_for_the_file(tmp_path):
    """`check --memory` applies to looprover's own process: when the code it must load leaves no room, the file
    is UNKNOWN (out of memory), never a traceback."""
    import subprocess
    import sys
    c = tmp_path / "p.c"
    c.write_text(HEADER + "int main(void) { int a[2]; return a[__VERIFIER_nondet_int()]; }\n")
    r = subprocess.run([sys.executable, "-m", "looprover", "check", str(c), "--memory", "30", "--json"],
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == cli.EXIT_VERDICT and "Traceback" not in r.stderr, r.stderr
    data = json.loads(r.stdout)
    assert data["status"] == "UNKNOWN" and data["reason"].startswith("out of memory"), data
