/* expected: FALSE. p is written by every complete iteration, but the final iteration breaks after i++ and
   before the write: p's last writer is the last complete iteration. p == 2 when n == 2. */
#include "sv.h"
int main(void) {
  int p = -1, i = 0;
  int n = __VERIFIER_nondet_int();
  __VERIFIER_assume(0 <= n && n <= 5);
  while (1) {
    i++;
    if (i > n) break;
    p = i;
  }
  __VERIFIER_assert(p != 2);
  return 0;
}
