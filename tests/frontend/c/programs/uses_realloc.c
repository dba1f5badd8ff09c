#include <stdlib.h>
int main(void) {
  int *p = malloc(sizeof(int) * 4);
  void *q = realloc(p, sizeof(int) * 8);
  free(q);
  return 0;
}
