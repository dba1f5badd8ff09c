/* expected: FALSE. The loop is left by a break when i == 5, after x was incremented 5 times. */
#include "sv.h"
int main(void) {
  int i = 0, x = 0;
  while (1) {
    x++;
    if (i == 5) break;
    i++;
  }
  __VERIFIER_assert(x != 6);
  return 0;
}
