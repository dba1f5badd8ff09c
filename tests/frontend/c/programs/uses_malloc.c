#include <stdlib.h>
int main(void) {
  int *p = malloc(sizeof(int) * 4);
  p[0] = 1;
  return p[0];
}
