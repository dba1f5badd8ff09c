/* expected: TRUE. At most 8 increments from 250: u is in 250..255 or 0..2, never 3. Needs the closed form
   u = 250 + k modulo 256, tied to i = k. */
#include "sv.h"
int main(void) {
  unsigned char u = 250;
  int n = __VERIFIER_nondet_int();
  __VERIFIER_assume(0 <= n && n <= 8);
  for (int i = 0; i < n; i++) { u++; }
  __VERIFIER_assert(u != 3);
  return 0;
}
