/* A program that feels the memcpy family's window for mid-sized copies:
 * copies of 8-32 KiB from a reused source into destinations walked
 * through a 512 MiB arena, so that each lands in memory out of the cache
 * (what a server's fresh buffers see); with "hot", through 256 KiB that
 * stay in the cache. With "none" it makes no copies that matter: a loop
 * of arithmetic as long. Each destination's last byte is read back.
 * usage: cold-copies [cold|hot|none] [MIB_COPIED (default 2048)] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	const int none = argc > 1 && strcmp(argv[1], "none") == 0;
	const size_t total = (size_t)(argc > 2 ? atoi(argv[2]) : 2048) << 20;
	unsigned sum = 0, seed = 1;
	if (none) {
		for (size_t i = 0; i < total / 16; i++)
			sum += (seed = seed * 1103515245u + 12345u) >> 20;
		printf("%u\n", sum);
		return 0;
	}
	const size_t arena = argc > 1 && strcmp(argv[1], "hot") == 0 ? (size_t)256 << 10 : (size_t)512 << 20;
	unsigned char *dst = malloc(arena), *src = malloc(32 << 10);
	if (!dst || !src)
		return 1;
	for (size_t i = 0; i < 32 << 10; i++)
		((volatile unsigned char *)src)[i] = (unsigned char)i;
	for (size_t i = 0; i < arena; i += 4096)   /* faulted in once, before the copies */
		((volatile unsigned char *)dst)[i] = 1;
	size_t at = 0;
	for (size_t done = 0; done < total;) {
		seed = seed * 1103515245u + 12345u;
		size_t n = (8 << 10) + (seed >> 8) % (24 << 10);
		if (at + n > arena)
			at = 0;
		memcpy(dst + at, src, n);
		sum += dst[at + n - 1];
		at += n + 64;
		done += n;
	}
	printf("%u\n", sum);
	return 0;
}
