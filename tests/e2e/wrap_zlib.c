/* A static program built with `pkg-config --variable=wrap_ldflags uarch`
 * and Debian's libz.a: compresses and decompresses 1 MiB of mixed data
 * (or argv[1] bytes) (text-like runs, random bytes, zeros) at levels 1, 6
 * and 9, checks the
 * round trip byte for byte, and prints uarch's bindings as op=variant.
 * Whether zlib's calls went through uarch is checked from outside (the
 * disassembly of zlib's functions and a debugger's breakpoints). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "uarch.h"

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? (size_t)strtoul(argv[1], NULL, 0) : 1 << 20;
	unsigned char *in = malloc(n), *out = malloc(n), *z = malloc(compressBound(n));
	if (!in || !out || !z)
		return 1;
	unsigned long long x = 88172645463325252ull;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size_t block = i >> 14;
		in[i] = block % 3 == 0 ? (unsigned char)("the quick brown fox "[i % 20])
			: block % 3 == 1 ? (unsigned char)x : 0;
	}
	int ok = 1;
	for (int level = 1; level <= 9; level += level == 1 ? 5 : 3) {
		uLongf zlen = compressBound(n), olen = n;
		memset(out, 0xa5, n);
		if (compress2(z, &zlen, in, n, level) != Z_OK || uncompress(out, &olen, z, zlen) != Z_OK ||
		    olen != n || memcmp(in, out, n) != 0) {
			printf("level %d: round trip WRONG\n", level);
			ok = 0;
		} else {
			printf("level %d: %zu -> %lu bytes, round trip identical\n", level, n, (unsigned long)zlen);
		}
	}
	const char *ops[] = {"memcpy", "memmove", "memset"};
	for (int i = 0; i < 3; i++)
		printf("%s=%s\n", ops[i], uarch_impl(ops[i]));
	printf("zlib %s\n", zlibVersion());
	free(in), free(out), free(z);
	return ok ? 0 : 1;
}
