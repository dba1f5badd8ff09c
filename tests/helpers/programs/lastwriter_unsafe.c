/* expected: FALSE. The pure output p is written in iteration 2 and the loop ends after iteration 3: the
   abstract loop needs M = 2 (last writer of p, then the final iteration). */
#include "sv.h"
int main(void) {
  int p = 0, i = 0;
  int n = __VERIFIER_nondet_int();
  __VERIFIER_assume(0 <= n && n <= 5);
  while (i < n) {
    if (i == 1) p = 7;
    i++;
  }
  __VERIFIER_assert(!(p == 7 && i == 3));
  return 0;
}
