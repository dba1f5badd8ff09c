#include <unistd.h>
int main(void) {
  int x = 3;
  usleep(10);
  return x;
}
