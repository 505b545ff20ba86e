/* Runs uarch_smp_mb a few times, for the valgrind test in api_test.cpp:
 * built twice, with the inline barrier and with -DUARCH_NO_INLINE (the
 * exported function, through the PLT). */
#include "uarch.h"

int main(void)
{
	for (int i = 0; i < 4; i++)
		uarch_smp_mb();
	return 0;
}
