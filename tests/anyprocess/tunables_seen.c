/* Prints the memcpy variant libuarch.so bound: linked -z now, so every
 * resolver runs while the program is relocated, before any constructor. */
#include <stdio.h>
#include "uarch.h"

int main(void)
{
	printf("%s\n", uarch_impl("memcpy"));
	return 0;
}
