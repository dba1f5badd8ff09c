/* expected: TRUE (unreach-call). No loop: the maximum of two inputs is at least each of them. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *)
    __attribute__((__nothrow__, __leaf__)) __attribute__((__noreturn__));
void reach_error(void) { __assert_fail("0", "max_safe.c", 4, "reach_error"); }
extern int __VERIFIER_nondet_int(void);

int main(void) {
  int a = __VERIFIER_nondet_int();
  int b = __VERIFIER_nondet_int();
  int m = a;
  if (b > a) {
    m = b;
  }
  if (!(m >= a && m >= b)) {
    reach_error();
  }
  return 0;
}
