/* expected: FALSE. a[2] == 2 after the loop when n >= 3. */
#include "sv.h"
int a[10];
int main(void) {
  int n = __VERIFIER_nondet_int();
  __VERIFIER_assume(0 <= n && n <= 10);
  for (int i = 0; i < n; i++) a[i] = i;
  __VERIFIER_assert(a[2] != 2);
  return 0;
}
