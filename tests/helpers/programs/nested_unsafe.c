/* expected: FALSE. s counts the inner iterations: 3 * 2 = 6 is reachable. */
#include "sv.h"
int main(void) {
  int s = 0;
  int n = __VERIFIER_nondet_int(), m = __VERIFIER_nondet_int();
  __VERIFIER_assume(0 <= n && n <= 4 && 0 <= m && m <= 4);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      s++;
  __VERIFIER_assert(s != 6);
  return 0;
}
