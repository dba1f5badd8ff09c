/* expected: FALSE (unreach-call). No loop: the input 42 sets y to -1. */
extern void abort(void);
extern void __assert_fail(const char *, const char *, unsigned int, const char *)
    __attribute__((__nothrow__, __leaf__)) __attribute__((__noreturn__));
void reach_error(void) { __assert_fail("0", "branch_unsafe.c", 4, "reach_error"); }
extern int __VERIFIER_nondet_int(void);

int main(void) {
  int x = __VERIFIER_nondet_int();
  int y = 0;
  if (x > 10 && x < 1000) {
    y = x - 10;
  }
  if (x == 42) {
    y = -1;
  }
  if (y < 0) {
    reach_error();
  }
  return 0;
}
