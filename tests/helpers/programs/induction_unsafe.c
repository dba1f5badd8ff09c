/* expected: FALSE. The in-loop assertion fails in the third iteration only (x == 4). */
#include "sv.h"
int main(void) {
  int x = 0;
  int n = __VERIFIER_nondet_int();
  __VERIFIER_assume(0 <= n && n <= 1000);
  for (int i = 0; i < n; i++) {
    __VERIFIER_assert(x != 4);
    x += 2;
  }
  return 0;
}
