/* expected: TRUE. Both paths add 1 to x or y and 1 to i: x + y == i. */
#include "sv.h"
int main(void) {
  unsigned int x = 0, y = 0, i = 0;
  unsigned int n = __VERIFIER_nondet_uint();
  for (i = 0; i < n; i++) {
    if (__VERIFIER_nondet_int()) x += 1u; else y += 1u;
  }
  __VERIFIER_assert(x + y == n || n > 2147483647u);
  return 0;
}
