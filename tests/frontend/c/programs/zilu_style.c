/* loop-zilu style: reach_error via assert.h (needs the system preprocessor) */
#include <assert.h>
#include <limits.h>
void reach_error(void) { assert(0); }
extern int __VERIFIER_nondet_int(void);
void __VERIFIER_assert(int cond) { if (!cond) { reach_error(); } }
long big = LONG_MAX;
int main() {
  int i = __VERIFIER_nondet_int();
  if (!(i > 0 && i < 100)) return 0;
  while (i < 100) { i++; }
  __VERIFIER_assert(i == 100 && big > 0);
  return 0;
}
