#include "does_not_exist.h"
int main(void) { return 0; }
