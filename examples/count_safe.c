/* expected: TRUE (unreach-call). A counting loop up to a nondeterministic bound: x <= n holds at the loop
   head, so x == n after the loop, however large n is. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *)
    __attribute__((__nothrow__, __leaf__)) __attribute__((__noreturn__));
void reach_error(void) { __assert_fail("0", "count_safe.c", 5, "reach_error"); }
extern unsigned int __VERIFIER_nondet_uint(void);
void __VERIFIER_assert(int cond) { if (!cond) { reach_error(); abort(); } }

int main(void) {
  unsigned int n = __VERIFIER_nondet_uint();
  unsigned int x = 0;
  while (x < n) {
    x++;
  }
  __VERIFIER_assert(x == n);
  return 0;
}
