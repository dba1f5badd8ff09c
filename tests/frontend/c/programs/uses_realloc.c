#include <stdlib.h>
int main(void) {
  int *p = malloc(sizeof(int) * 4);
  p = realloc(p, sizeof(int) * 8);
  free(p);
  return 0;
}
