extern int __VERIFIER_nondet_int(void);
int main(void) {
  int x = __VERIFIER_nondet_int();
  double d = x * 0.5;
  return d > 1.0;
}
