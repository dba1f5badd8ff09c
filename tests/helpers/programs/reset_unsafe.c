/* expected: FALSE. x is reset to 10 at i == 2 and incremented after: x == 12 when n == 4. */
#include "sv.h"
int main(void) {
  int x = 0;
  int n = __VERIFIER_nondet_int();
  __VERIFIER_assume(0 <= n && n <= 6);
  for (int i = 0; i < n; i++) {
    if (i == 2) x = 10;
    x++;
  }
  __VERIFIER_assert(x != 12);
  return 0;
}
