/* expected: TRUE. found is only ever set to 1 (or kept): found in {0, 1}. */
#include "sv.h"
int main(void) {
  int found = 0;
  unsigned int n = __VERIFIER_nondet_uint();
  for (unsigned int i = 0; i < n; i++) {
    int v = __VERIFIER_nondet_int();
    if (v == 7) found = 1;
  }
  __VERIFIER_assert(found == 0 || found == 1);
  return 0;
}
