/* expected: FALSE. The unsigned char wraps: 250 + 8 = 2 (mod 256). */
#include "sv.h"
int main(void) {
  unsigned char u = 250;
  int n = __VERIFIER_nondet_int();
  __VERIFIER_assume(0 <= n && n <= 10);
  for (int i = 0; i < n; i++) { u++; }
  __VERIFIER_assert(u != 2);
  return 0;
}
