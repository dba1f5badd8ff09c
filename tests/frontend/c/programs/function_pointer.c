int inc(int x) { return x + 1; }
int main(void) {
  void *p = (void *)inc;
  return p != 0;
}
