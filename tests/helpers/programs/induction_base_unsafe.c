/* expected: FALSE. The in-loop assertion fails in the first iteration only. */
#include "sv.h"
int main(void) {
  int x = 0;
  unsigned int n = __VERIFIER_nondet_uint();
  for (unsigned int i = 0; i < n; i++) {
    __VERIFIER_assert(x != 0);
    x = 1;
  }
  return 0;
}
