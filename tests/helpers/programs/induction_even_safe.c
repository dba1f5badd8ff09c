/* expected: TRUE. x stays even (x = 2k); the in-loop assertion needs induction plus acceleration. */
#include "sv.h"
int main(void) {
  unsigned int x = 0;
  unsigned int n = __VERIFIER_nondet_uint();
  for (unsigned int i = 0; i < n; i++) {
    __VERIFIER_assert(x % 2u == 0u);
    x += 2u;
  }
  return 0;
}
