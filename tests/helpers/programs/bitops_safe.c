extern void reach_error(void);
void __VERIFIER_assert(int c) { if (!c) reach_error(); }
extern unsigned int __VERIFIER_nondet_uint(void);
int main(void) {
  unsigned int x = __VERIFIER_nondet_uint();
  unsigned int y = __VERIFIER_nondet_uint();
  __VERIFIER_assert((x & y) <= x);
  __VERIFIER_assert((x | y) >= y);
  __VERIFIER_assert(((x ^ y) ^ y) == x);
  __VERIFIER_assert((~x & x) == 0u);
  if (x != 0u) __VERIFIER_assert((x & (x - 1u)) < x);
  return 0;
}
