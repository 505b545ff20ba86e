/* A fortified program (-O2 -D_FORTIFY_SOURCE=2): the destination is a
 * 16-byte array the compiler knows, the length comes from the command line,
 * so every call below becomes __memcpy_chk & co. (explicit_bzero:
 * __explicit_bzero_chk) with dstlen 16. Under
 * LD_PRELOAD=libuarch_preload.so those are uarch's: a length over 16 must
 * end in "*** buffer overflow detected ***" and SIGABRT (via the C
 * library's __chk_fail), a length up to 16 must copy. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s memcpy|memmove|memset|mempcpy|explicit_bzero N\n", argv[0]);
		return 2;
	}
	size_t n = strtoul(argv[2], NULL, 0);
	char src[64];
	char dst[16];
	for (int i = 0; i < 64; i++)
		src[i] = (char)('a' + i % 26);
	memset(dst, '.', sizeof dst);   /* constant size: checked at compile time */
	const char *op = argv[1];
	void *ret = NULL, *want = dst;
	if (!strcmp(op, "memcpy"))
		ret = memcpy(dst, src, n);
	else if (!strcmp(op, "memmove"))
		ret = memmove(dst, src, n);
	else if (!strcmp(op, "memset"))
		ret = memset(dst, 'z', n);
	else if (!strcmp(op, "mempcpy")) {
		ret = mempcpy(dst, src, n);
		want = dst + n;
	} else if (!strcmp(op, "explicit_bzero")) {
		explicit_bzero(dst, n);
		ret = dst;
	} else
		return 2;
	if (ret != want) {
		printf("wrong return value\n");
		return 1;
	}
	for (size_t i = 0; i < sizeof dst; i++) {
		char expect = i >= n ? '.' : op[0] == 'e' ? 0 : op[3] == 's' ? 'z' : src[i];
		if (dst[i] != expect) {
			printf("wrong byte %zu\n", i);
			return 1;
		}
	}
	for (size_t i = 0; i < sizeof dst; i++)
		dst[i] = dst[i] ? dst[i] : '0';   /* printable */
	printf("%s %zu ok: %.16s\n", op, n, dst);
	return 0;
}
