/* expected: FALSE. As multiloop_safe.c but with x1 <= 300 allowed: x1 = 300 skips the first loop. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *);
extern int __VERIFIER_nondet_int(void);
extern void __VERIFIER_assume(int cond);
void reach_error(void) { __assert_fail("0", __FILE__, __LINE__, "reach_error"); }
void __VERIFIER_assert(int cond) { if (!cond) { reach_error(); abort(); } }
int main(void) {
  int x1 = __VERIFIER_nondet_int(), x2 = __VERIFIER_nondet_int(), x3 = 0;
  __VERIFIER_assume(0 <= x1 && x1 <= 300 && 0 <= x2 && x2 <= 50);
  while (x1 < 300) { x1++; x2++; x3--; }
  while (x2 > x3) { x3++; x1--; }
  __VERIFIER_assert(x1 <= 0);
  return 0;
}
