/* expected: TRUE. x - i == 1 when the loop breaks. */
#include "sv.h"
int main(void) {
  unsigned int i = 0, x = 0;
  unsigned int n = __VERIFIER_nondet_uint();
  while (1) {
    x++;
    if (i == n) break;
    i++;
  }
  __VERIFIER_assert(x == n + 1u);
  return 0;
}
