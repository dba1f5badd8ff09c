/* expected: FALSE (unreach-call). x steps by 2, so it overshoots any odd bound: n = 1 ends with x = 2. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *)
    __attribute__((__nothrow__, __leaf__)) __attribute__((__noreturn__));
void reach_error(void) { __assert_fail("0", "count_unsafe.c", 4, "reach_error"); }
extern unsigned int __VERIFIER_nondet_uint(void);
void __VERIFIER_assert(int cond) { if (!cond) { reach_error(); abort(); } }

int main(void) {
  unsigned int n = __VERIFIER_nondet_uint();
  unsigned int x = 0;
  while (x < n) {
    x += 2;
  }
  __VERIFIER_assert(x == n);
  return 0;
}
