/* trace_early: 100 memcpy of 48 bytes after its library's constructor
 * copied (early_lib.c). Prints the text the constructor copied. */
#include <stdio.h>
#include <string.h>

const char *early_text(void);

int main(void)
{
	static char a[48], b[48];
	/* Through a pointer: a fortified build would inline a direct call. */
	void *(*volatile copy)(void *, const void *, size_t) = memcpy;
	for (int i = 0; i < 100; i++)
		copy(a + (i & 1), b, 47);
	puts(early_text());
	return 0;
}
