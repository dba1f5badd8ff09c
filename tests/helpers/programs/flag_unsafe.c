/* expected: FALSE. A non-recurrent flag: found = 1 when some input equals 7. */
#include "sv.h"
int main(void) {
  int found = 0;
  int n = __VERIFIER_nondet_int();
  __VERIFIER_assume(0 <= n && n <= 5);
  for (int i = 0; i < n; i++) {
    int v = __VERIFIER_nondet_int();
    if (v == 7) found = 1;
  }
  __VERIFIER_assert(found == 0);
  return 0;
}
