#include <stdlib.h>
int main(void) {
  for (int k = 0; k < 2; k++) {
    int *p = malloc(sizeof(int) * 4);
    if (p) free(p);
  }
  return 0;
}
