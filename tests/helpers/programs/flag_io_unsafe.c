/* expected: FALSE. found is read in the loop (an IO variable) and only ever set to 1: non-recurrent. */
#include "sv.h"
int main(void) {
  int found = 0, at = -1;
  int n = __VERIFIER_nondet_int();
  __VERIFIER_assume(0 <= n && n <= 5);
  for (int i = 0; i < n; i++) {
    int v = __VERIFIER_nondet_int();
    if (found == 0 && v == 7) { found = 1; at = i; }
  }
  __VERIFIER_assert(!(found == 1 && at == 3));
  return 0;
}
