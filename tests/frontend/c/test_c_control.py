"""Control flow of the front-end, cross-checked against gcc (see c_harness)."""
from __future__ import annotations

from helpers.c_harness import crosscheck

BOTH = ("LP64", "ILP32")

SWITCH = r"""
extern int __VERIFIER_nondet_int(void);
int trace, hits;
int main(void) {
  int x = __VERIFIER_nondet_int();
  switch (x) {
    case 0: trace = trace * 10 + 1;          /* falls through */
    case 1: trace = trace * 10 + 2; break;
    case 2: { int t = 3; trace = trace * 10 + t; }
    case 5 ... 7: trace = trace * 10 + 4;    /* GNU case range, falls into default */
    default: trace = trace * 10 + 5; break;
    case -1: trace = 99;
  }
  switch ((unsigned char)x) { case 255: hits = 1; break; case 0: hits = 2; }
  switch (x) { default: hits += 100; }
  switch (x) case 3: hits += 1000;
  return 0;
}
"""


def test_switch_fallthrough_ranges_default(gcc, tmp_path):
    crosscheck(gcc, tmp_path, SWITCH, [[i] for i in (-1, 0, 1, 2, 3, 5, 6, 7, 8, 255, -256)], ["trace", "hits"], BOTH)


LOOPS = r"""
extern int __VERIFIER_nondet_int(void);
int count, inner, last, dw, skipped;
int main(void) {
  int n = __VERIFIER_nondet_int();
  int i, j;
  if (n > 20 || n < -5) n = 20;
  for (i = 0; i < n; i++) {
    if (i == 7) continue;
    for (j = 0; ; j++) {
      if (j >= i) break;
      if ((i + j) % 3 == 0) continue;
      inner++;
    }
    if (i > 12) break;
    count++;
  }
  last = i;
  do { dw++; } while (dw < n);
  j = 0;
  do { if (j++ & 1) continue; if (j > 7) break; skipped += 100; } while (j < n);
  i = 0;
  while (1) { i++; if (i > 5) break; if (i & 1) continue; skipped += i; }
  for (;;) { if (--n < 0) break; }
  return 0;
}
"""


def test_nested_loops_break_continue_do_while(gcc, tmp_path):
    crosscheck(gcc, tmp_path, LOOPS, [[0], [1], [5], [8], [13], [20], [-3], [100]],
               ["count", "inner", "last", "dw", "skipped"], BOTH)


GOTO = r"""
extern int __VERIFIER_nondet_int(void);
int r, steps;
int main(void) {
  int x = __VERIFIER_nondet_int();
  if (x < 0) goto neg;
  r = 1;
  goto done;
neg:
  r = -1;
again:
  steps++;
  if (steps < 3) goto again;
done:
  if (x == 42) goto end;
  r *= 2;
end:
  return 0;
}
"""


def test_goto_and_labels(gcc, tmp_path):
    crosscheck(gcc, tmp_path, GOTO, [[0], [-5], [42], [7]], ["r", "steps"], BOTH)


SHORT_CIRCUIT = r"""
extern int __VERIFIER_nondet_int(void);
int calls, a, b, c, d, e, cond1, seq;
int f(int v) { calls++; return v; }
int main(void) {
  int x = __VERIFIER_nondet_int();
  int y = __VERIFIER_nondet_int();
  a = (x > 0) && f(y);           /* f only called when x > 0 */
  b = (x > 0) || f(y + 1);
  c = x ? f(1) : f(2) + 10;
  d = (y++ > 3) && (x++ < 5);
  if (x == 1 || (y = 7, calls > 2)) e = 1;
  cond1 = (x != 0 && 10 / x > 2);   /* the division only happens when x != 0 */
  seq = (x = 3, x + 1);
  return 0;
}
"""


def test_short_circuit_with_side_effects(gcc, tmp_path):
    crosscheck(gcc, tmp_path, SHORT_CIRCUIT, [[0, 0], [1, 5], [-2, 9], [3, 1], [0, 4], [7, 7]],
               ["calls", "a", "b", "c", "d", "e", "cond1", "seq"], BOTH)


ASSERT_ASSUME = r"""
extern int __VERIFIER_nondet_int(void);
extern void __VERIFIER_assume(int);
extern void __VERIFIER_assert(int);
extern void abort(void);
int seen;
int main(void) {
  int x = __VERIFIER_nondet_int();
  __VERIFIER_assume(x != 13);
  seen = 1;
  if (x == 99) abort();
  seen = 2;
  __VERIFIER_assert(x != 5);
  seen = 3;
  return 0;
}
"""


def test_assert_assume_abort_outcomes(gcc, tmp_path):
    crosscheck(gcc, tmp_path, ASSERT_ASSUME, [[13], [99], [5], [0]], ["seen"], BOTH)


REACH = r"""
extern int __VERIFIER_nondet_int(void);
extern void reach_error(void);
extern void exit(int);
int k;
int main(void) {
  int x = __VERIFIER_nondet_int();
  for (k = 0; k < 10; k++) {
    if (k == x) exit(0);
  }
  if (x == 20) { reach_error(); }
  return 0;
}
"""


def test_reach_error_and_exit(gcc, tmp_path):
    crosscheck(gcc, tmp_path, REACH, [[3], [20], [11]], ["k"], BOTH)


STMT_EXPR_AND_COMMA = r"""
extern int __VERIFIER_nondet_int(void);
int r1, r2, r3;
int main(void) {
  int x = __VERIFIER_nondet_int();
  r1 = ({ int t = x * 2; t + 1; });
  r2 = x > 3 ? : 9;                 /* GNU ?: without middle operand */
  for (int i = 0, j = 10; i < j; i++, j--) r3 += i * j;
  return 0;
}
"""


def test_gnu_statement_expressions_and_comma(gcc, tmp_path):
    crosscheck(gcc, tmp_path, STMT_EXPR_AND_COMMA, [[0], [4], [-2]], ["r1", "r2", "r3"], BOTH)


CALLS_IN_CONDITIONS = r"""
extern int __VERIFIER_nondet_int(void);
int calls, r1, r2, r3;
int lt(int a, int b) { calls++; return a < b; }
int next(int *p) { return ++*p; }
int main(void) {
  int n = __VERIFIER_nondet_int() & 15;
  int i = 0;
  while (lt(i, n) && i != 9) i += 2;
  r1 = i;
  for (int k = 0; lt(k, 3); next(&k)) r2 += k;
  i = 0;
  while (1) {
    switch (next(&i)) {
      case 1: continue;
      case 4: goto out;
      default: r3 += i;
    }
    if (i > 10) break;
  }
out:
  r3 = r3 * 100 + i;
  return 0;
}
"""


def test_calls_in_loop_conditions_and_switch_continue(gcc, tmp_path):
    crosscheck(gcc, tmp_path, CALLS_IN_CONDITIONS, [[0], [1], [9], [12], [15]], ["calls", "r1", "r2", "r3"],
               BOTH)


def test_mutual_recursion_is_unsupported(tmp_path):
    import pytest
    from looprover.errors import UnsupportedError
    from looprover.frontend.c import load_c_program
    f = tmp_path / "mr.c"
    f.write_text("int odd(int n);\nint even(int n) { return n == 0 ? 1 : odd(n - 1); }\n"
                 "int odd(int n) { return n == 0 ? 0 : even(n - 1); }\nint main(void) { return even(4); }\n")
    with pytest.raises(UnsupportedError, match="recursion"):
        load_c_program(f)
