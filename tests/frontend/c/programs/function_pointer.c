int inc(int x) { return x + 1; }
int main(void) {
  int (*f)(int) = inc;
  return f(2);
}
