/* A program built with -fsanitize=address for the preload-asan check:
 *   asan_copy N      copies and fills N bytes of heap (memcpy, memmove,
 *                    memset), checks every byte, prints "ok N";
 *   asan_copy N +K   copies N + K bytes into an N-byte block: ASan must
 *                    report the overflow. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 0;
	size_t extra = argc > 2 ? strtoul(argv[2] + (argv[2][0] == '+'), NULL, 10) : 0;
	unsigned char *a = malloc(n + 64), *b = malloc(n);
	if (!a || !b)
		return 2;
	for (size_t i = 0; i < n + 64; i++)
		a[i] = (unsigned char)(i * 7 + 1);
	memcpy(b, a, n + extra);
	for (size_t i = 0; i < n; i++)
		if (b[i] != (unsigned char)(i * 7 + 1))
			return printf("memcpy: byte %zu wrong\n", i), 1;
	memmove(a + 1, a, n);   /* overlapping, backward */
	for (size_t i = 0; i < n; i++)
		if (a[i + 1] != b[i])
			return printf("memmove: byte %zu wrong\n", i), 1;
	memset(b, 0x5a, n);
	for (size_t i = 0; i < n; i++)
		if (b[i] != 0x5a)
			return printf("memset: byte %zu wrong\n", i), 1;
	printf("ok %zu\n", n);
	free(a);
	free(b);
	return 0;
}
