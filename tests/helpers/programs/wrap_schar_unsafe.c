/* expected: FALSE (gcc semantics: the conversion back to signed char wraps). 120 + 10 = -126. */
#include "sv.h"
int main(void) {
  signed char c = 120;
  int n = __VERIFIER_nondet_int();
  __VERIFIER_assume(0 <= n && n <= 12);
  for (int i = 0; i < n; i++) { c++; }
  __VERIFIER_assert(c != -126);
  return 0;
}
