"""The `summarize` engine end to end: TRUE from the summaries, FALSE only when the summarized program's
counterexample replays on the program, otherwise UNKNOWN with the leaping counterexample shown."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from looprover.engines import get_engine, verify
from looprover.engines.base import Run, Task
from looprover.portfolio import choose_engines
from looprover.verdict import LeapingCounterexample, Status

from helpers import enginecases as ec

SAFE = [ec.loopfree(True), ec.bounded_loop(True), ec.even_counter(7), ec.nonneg_counter(), ec.nested_unbounded(7),
        ec.unsigned_decrement(), ec.array_nondet(True)]
UNSAFE = [ec.loopfree(False), ec.bounded_loop(False), ec.even_counter(8), ec.deep_bug(), ec.nested(False),
          ec.nested_unbounded(8), ec.unsigned_wrap_bug(), ec.array_init(False), ec.array_nondet(False)]


@pytest.mark.parametrize("p", SAFE, ids=lambda p: p.name)
def test_safe_programs_are_proved(p):
    v = verify("summarize", p, timeout=20)
    assert v.status == Status.TRUE, v.reason


@pytest.mark.parametrize("p", UNSAFE, ids=lambda p: p.name)
def test_unsafe_programs_are_never_true(p):
    v = verify("summarize", p, timeout=20)
    assert v.status != Status.TRUE, v.reason
    if v.status == Status.FALSE:
        assert v.evidence.validated


def test_replayable_counterexample_is_false():
    v = verify("summarize", ec.deep_bug(), timeout=20)     # the bug lies behind the loop, on real inputs
    assert v.status == Status.FALSE and v.evidence.validated


LEAP = """extern void reach_error(void);
void __VERIFIER_assert(int c) { if (!c) reach_error(); }
int main(void) { int x = 0, y = 0; while (x < 10) { x++; y = y + x; } __VERIFIER_assert(y != 12); return 0; }
"""


def test_leaping_counterexample_is_unknown_with_its_key(tmp_path):
    f = tmp_path / "leap.c"
    f.write_text(LEAP)        # safe (y = 55 at the end); the summary knows y >= 0 only, so it "leaps" to y = 12
    out = subprocess.run([sys.executable, "-m", "looprover", "verify", str(f), "--engine", "summarize", "--json",
                          "--timeout", "30"], capture_output=True, text=True)
    d = json.loads(out.stdout)
    assert d["status"] == "UNKNOWN" and "leaping" in d["reason"]
    assert d["leaping_counterexample"]["steps"] and "unconfirmed_counterexample" not in d
    text = subprocess.run([sys.executable, "-m", "looprover", "verify", str(f), "--engine", "summarize",
                           "--timeout", "30"], capture_output=True, text=True).stdout
    assert text.startswith("UNKNOWN") and "leaping counterexample" in text


def test_leaping_evidence_runs_on_the_summarized_program():
    v = verify("summarize", ec.even_counter(8), timeout=20)
    assert v.status == Status.UNKNOWN and isinstance(v.evidence, LeapingCounterexample)
    assert v.evidence.program is not None and not v.evidence.validated


def test_engine_is_in_the_portfolio_for_c_reachability():
    e = get_engine("summarize")
    assert Status.TRUE in e.verdicts and Status.FALSE in e.verdicts
    assert "summarize" in choose_engines(Task(), Run.with_timeout(5))


def test_irreducible_is_unknown_with_reason():
    v = verify("summarize", ec.irreducible(True), timeout=10)
    assert v.status == Status.UNKNOWN and "irreducible" in v.reason


FILL = """extern void reach_error(void);
void __VERIFIER_assert(int c) { if (!c) reach_error(); }
extern int __VERIFIER_nondet_int(void);
int a[1000];
int main(void) {
  int n = __VERIFIER_nondet_int();
  if (n < 0 || n > 1000) return 0;
  for (int i = 0; i < n; i++) a[i] = 5;
  int k = __VERIFIER_nondet_int();
  if (0 <= k && k < n) __VERIFIER_assert(a[k] == %d);
  return 0;
}
"""


@pytest.mark.parametrize("value,expected", [(5, Status.TRUE), (6, Status.FALSE)])
def test_array_fill_needs_the_contents_domain(tmp_path, value, expected):
    """`∀ k ∈ [i0, i): a[k] == 5` over the swept range (the written array is havocked whole)."""
    from looprover.frontend.c import load_c_program
    f = tmp_path / "fill.c"
    f.write_text(FILL % value)
    v = verify("summarize", load_c_program(f, "ILP32"), timeout=30)
    assert v.status == expected, v.reason


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc missing")
def test_quantified_summary_prints_as_c_that_gcc_compiles(tmp_path):
    f = tmp_path / "fill.c"
    f.write_text(FILL % 5)
    out = tmp_path / "s.c"
    subprocess.run([sys.executable, "-m", "looprover", "transform", str(f), "--technique", "summarize", "-o",
                    str(out)], check=True)
    assert "__lr_k_a" in out.read_text()
    r = subprocess.run(["gcc", "-c", "-o", str(tmp_path / "s.o"), str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


HEAD = """extern void reach_error(void);
void __VERIFIER_assert(int c) { if (!c) reach_error(); }
extern int __VERIFIER_nondet_int(void);
extern char __VERIFIER_nondet_char(void);
"""
# one loop per domain the summaries add: (body of main, safe?) -- the safe one needs that domain's fact, the
# unsafe one differs only in the assertion, which no kept conjunct may prove
DOMAIN_LOOPS = {
    "octagon": "int i = 1, j = 10; while (j >= i) { i = i + 2; j = j - 1; } __VERIFIER_assert(j == %d);",
    "deltas": "int a = __VERIFIER_nondet_int(), b = __VERIFIER_nondet_int(); if (a > 1000000 || b < 0 || "
              "b > 1000000) return 0; int res = a, cnt = b; while (cnt > 0) { cnt--; res++; } "
              "__VERIFIER_assert(res == a + b + %d);",
    "strings": "char s[100]; int n = __VERIFIER_nondet_int(); if (n < 0 || n >= 100) return 0; "
               "for (int k = 0; k < n; k++) { s[k] = __VERIFIER_nondet_char(); if (s[k] == 0) return 0; } "
               "s[n] = 0; int p = 0; while (s[p] != 0) p++; __VERIFIER_assert(p <= n - %d);",
}


@pytest.mark.parametrize("domain", sorted(DOMAIN_LOOPS))
@pytest.mark.parametrize("wrong", [0, 1], ids=["safe", "unsafe"])
def test_each_summary_domain_on_a_loop(tmp_path, domain, wrong):
    from looprover.frontend.c import load_c_program
    f = tmp_path / f"{domain}.c"
    body = DOMAIN_LOOPS[domain] % ((6 + wrong) if domain == "octagon" else wrong)
    f.write_text(HEAD + "int main(void) { " + body + " return 0; }\n")
    v = verify("summarize", load_c_program(f, "ILP32"), timeout=30)
    if wrong:
        assert v.status != Status.TRUE, v.reason
    else:
        assert v.status == Status.TRUE, v.reason


SCAN = HEAD + """int main(void) {
  char a[1001];
  for (int k = 0; k < 1000; k++) a[k] = __VERIFIER_nondet_char();
  %s
  int i = -1;
  do { i++; } while (a[i] != 0);
  return 0;
}
"""


@pytest.mark.parametrize("terminated", [True, False], ids=["safe", "unsafe"])
def test_scan_to_a_terminator_in_the_last_cell_stays_in_bounds(tmp_path, terminated):
    """valid-memsafety: `a[1000] == 0` and `i < 1000` at the loop head (the strings domain's last-cell pair)
    prove the scan never reads past the buffer without unwinding it; without the terminator it may."""
    from looprover.frontend.c import load_c_program
    f = tmp_path / "scan.c"
    f.write_text(SCAN % ("a[1000] = 0;" if terminated else ""))
    v = verify("summarize", load_c_program(f, "ILP32", memsafety=True), timeout=30)
    if terminated:
        assert v.status == Status.TRUE, v.reason
    else:
        assert v.status != Status.TRUE, v.reason


ALLOCA_SCAN = """
extern int __VERIFIER_nondet_int(void);
extern char __VERIFIER_nondet_char(void);
int main() {
  int n = __VERIFIER_nondet_int();
  if (n < 1) n = 1;
  char *s = (char *) __builtin_alloca(n);
  s[n - 1] = 0;
  for (int i = 0; i < %s; i++) s[i] = __VERIFIER_nondet_char();
  char *p = s;
  while (*p != 0) p++;
  return 0;
}
"""


@pytest.mark.parametrize("engine", ["summarize", "kinduction"])
@pytest.mark.parametrize("bound", ["n - 1", "n"], ids=["safe", "unsafe"])
def test_scan_of_a_buffer_of_unknown_size_stops_at_its_last_cell(tmp_path, bound, engine):
    """valid-memsafety: a buffer of n cells (n unknown) whose last cell holds the terminator: `s[n - 1] == 0`
    (the strings domain's last cell of a buffer of unknown size) keeps the scan in bounds, for the loop summary
    and for k-induction's invariants (which also certify the summary's TRUE); when the fill loop overwrites the
    last cell too, the scan may run past it."""
    from looprover.frontend.c import load_c_program
    f = tmp_path / "scan.c"
    f.write_text(ALLOCA_SCAN % bound)
    v = verify(engine, load_c_program(f, "ILP32", memsafety=True), timeout=30)
    if bound == "n - 1":
        assert v.status == Status.TRUE, v.reason
    else:
        assert v.status != Status.TRUE, v.reason


@pytest.mark.parametrize("p", [ec.nonneg_counter(), ec.uchar_overflow_bug(), ec.doubling_wrap_bug(), ec.even_counter(8)],
                         ids=lambda p: p.name)
def test_bitvector_wraparound_bugs_are_never_true(p):
    """`nonneg`: x++ from 0 wraps to a negative value with gcc's semantics."""
    assert verify("summarize", p, timeout=20, bitvector=True).status != Status.TRUE


def test_bitvector_summaries_prove_safe_loops():
    for p in (ec.even_counter(7), ec.unsigned_decrement()):
        assert verify("summarize", p, timeout=20, bitvector=True).status == Status.TRUE


@pytest.mark.parametrize("offsets, safe", [("o > 10", True), ("o > 1003", True), ("o > 1004", False)])
def test_a_scan_from_an_offset_into_a_terminated_buffer_is_summarized_by_the_sum_of_both(tmp_path, offsets, safe):
    """`strlen(msg + o)` over a buffer whose last cell is 0: the summary needs `o + n <= 1003` (the strings
    domain's bound of an index sum, `strings.index_sums`), which neither counter states alone. An offset up to
    the last cell is safe (the scan stops there at once); one past it reads outside the buffer."""
    pytest.importorskip("looprover.frontend.c")
    from looprover.frontend.c import load_c_program
    f = tmp_path / "scan.c"
    f.write_text("extern char __VERIFIER_nondet_char(void); extern int __VERIFIER_nondet_int(void);\n"
                 "int main(void) { char msg[1004]; for (int k = 0; k < 1003; k++) msg[k] = __VERIFIER_nondet_char();"
                 " msg[1003] = 0; int o = __VERIFIER_nondet_int(); if (o < 0 || " + offsets + ") return 0;"
                 " char *s = msg + o; int n = 0; while (s[n] != 0) n++; return 0; }\n")
    v = verify("summarize", load_c_program(f, "ILP32", memsafety=True), timeout=30)
    assert (v.status == Status.TRUE) == safe, v.reason
