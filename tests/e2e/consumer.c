/* A program outside the project that uses uarch as its users would: through
 * a Meson subproject, pkg-config or CMake's find_package(uarch). Prints the
 * bindings (compared with impl_print's by e2e.py) after a small copy. */
#include <stdio.h>
#include <string.h>
#include <uarch.h>

int main(void)
{
	static const char *const ops[] = {
		"memcpy", "memmove", "memset", "prefetch_range", "prefetchw", "smp_mb", "idle_wait",
	};
	char a[300], b[300];
	for (int i = 0; i < 300; i++)
		a[i] = (char)(i * 7);
	if (uarch_memcpy(b, a, sizeof a) != b || memcmp(a, b, sizeof a) != 0)
		return 1;
	uarch_memset(b, 1, sizeof b);
	uarch_smp_mb();
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		printf("%s=%s\n", ops[i], uarch_impl(ops[i]));
	return b[299] == 1 ? 0 : 1;
}
