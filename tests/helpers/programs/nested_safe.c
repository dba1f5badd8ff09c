/* expected: TRUE. The inner loop always leaves j == m; its assertion holds in every iteration. */
#include "sv.h"
int main(void) {
  unsigned int n = __VERIFIER_nondet_uint(), m = __VERIFIER_nondet_uint();
  unsigned int i, j = 0;
  for (i = 0; i < n; i++) {
    for (j = 0; j < m; j++) {
      __VERIFIER_assert(j < m);
    }
    __VERIFIER_assert(j == m);
  }
  return 0;
}
