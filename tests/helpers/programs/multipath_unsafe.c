/* expected: FALSE. Two paths: x += 1 or y += 2; x + y == 5 with x == 1 (n == 3). */
#include "sv.h"
int main(void) {
  int x = 0, y = 0;
  int n = __VERIFIER_nondet_int();
  __VERIFIER_assume(0 <= n && n <= 4);
  for (int i = 0; i < n; i++) {
    if (__VERIFIER_nondet_int()) x += 1; else y += 2;
  }
  __VERIFIER_assert(x + y != 5);
  return 0;
}
