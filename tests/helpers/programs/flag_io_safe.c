/* expected: TRUE. found in {0, 1} across any number of iterations (non-recurrent closed form). */
#include "sv.h"
int main(void) {
  int found = 0;
  unsigned int n = __VERIFIER_nondet_uint();
  for (unsigned int i = 0; i < n; i++) {
    int v = __VERIFIER_nondet_int();
    if (found == 0 && v == 7) found = 1;
    __VERIFIER_assert(found == 0 || found == 1);
  }
  return 0;
}
