/* expected: FALSE. s is an input-output (s = s + 2): if it were treated as a pure output, s could only be
   0 or 2 after the abstract loop and the assertion would be "proved". */
#include "sv.h"
int main(void) {
  int s = 0;
  int n = __VERIFIER_nondet_int();
  __VERIFIER_assume(0 <= n && n <= 5);
  for (int i = 0; i < n; i++) { s = s + 2; }
  __VERIFIER_assert(s != 6);
  return 0;
}
