/* expected: FALSE when n == 5 (the counter reaches 5) */
#include "../../../helpers/programs/sv.h"
int main(void) {
  unsigned int x = 0;
  int n = __VERIFIER_nondet_int();
  __VERIFIER_assume(n >= 0 && n <= 10);
  while (x < (unsigned)n) x++;
  __VERIFIER_assert(x != 5);
  return 0;
}
