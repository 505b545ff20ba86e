/* A program outside the project that uses uarch as its users would: through
 * a Meson subproject, pkg-config or CMake's find_package(uarch). Prints the
 * bindings (compared with impl_print's by e2e.py) after a small copy. */
#include <stdio.h>
#include <string.h>
#include <uarch.h>

int main(void)
{
	char a[300], b[300];
	for (int i = 0; i < 300; i++)
		a[i] = (char)(i * 7);
	if (uarch_memcpy(b, a, sizeof a) != b || memcmp(a, b, sizeof a) != 0)
		return 1;
	uarch_memset(b, 1, sizeof b);
	uarch_smp_mb();
	for (unsigned i = 0; uarch_op(i); i++)
		printf("%s=%s\n", uarch_op(i), uarch_impl(uarch_op(i)));
	return b[299] == 1 ? 0 : 1;
}
