/* Known sequences of calls for the trace tests (prof_trace.py holds the
 * same sequences as its expectation). Every call goes through a volatile
 * pointer to the exported name, so the compiler neither inlines nor drops
 * it.
 *   trace_pattern seq     1000 memcpy of sizes 1..50 in turn, one source
 *                         into one destination, then 100 memset of sizes
 *                         1, 9, ..., 73 in turn into it, then 10 memmove
 *                         within it (forward overlap)
 *   trace_pattern fresh   300 memcpy of 4096 bytes, each into a region
 *                         mapped for it (never unmapped, never seen before)
 *   trace_pattern more    seq, then 100 memcpy of 4096 bytes and 30 ms
 *                         of CPU time (seq is its --trace-base)
 *   trace_pattern busy    seq, then 120 ms of CPU time: a base with
 *                         fewer calls than more but more CPU time
 *   trace_pattern cmp     memcmp, bcmp, strlen and strcmp, known calls
 *                         and bytes */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <time.h>

static void *(*volatile cpy)(void *, const void *, size_t) = memcpy;
static void *(*volatile mov)(void *, const void *, size_t) = memmove;
static void *(*volatile set)(void *, int, size_t) = memset;
static int (*volatile cmp)(const void *, const void *, size_t) = memcmp;
static int (*volatile bcmp_)(const void *, const void *, size_t) = bcmp;
static size_t (*volatile len)(const char *) = strlen;
static int (*volatile scmp)(const char *, const char *) = strcmp;

static _Alignas(64) char dst[8192], src[8192];

int main(int argc, char **argv)
{
	/* The mode by its first letter: no call of strcmp but the counted ones. */
	char mode = argc > 1 ? argv[1][0] : 0;
	if (mode == 's' || mode == 'm' || mode == 'b') {
		for (int i = 0; i < 1000; i++)
			cpy(dst, src, (size_t)(i % 50 + 1));
		for (int i = 0; i < 100; i++)
			set(dst, i, (size_t)(i % 10 * 8 + 1));
		for (int i = 0; i < 10; i++)
			mov(dst, dst + 16, 100);
		if (mode == 'm') {
			for (int i = 0; i < 100; i++)
				cpy(dst, src, 4096);
			while (clock() < CLOCKS_PER_SEC / 1000 * 30)
				;
		}
		while (mode == 'b' && clock() < CLOCKS_PER_SEC / 1000 * 120)
			;
		return 0;
	}
	if (mode == 'f') {
		for (int i = 0; i < 300; i++) {
			char *p = mmap(0, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED)
				return 3;
			cpy(p + 64, src, 4096);
		}
		return 0;
	}
	if (mode == 'c') {
		static char a[32] = "abcdefghijklmnopqrstuvwxyz", b[32] = "abcdefghijklmnopqrstuvwxyz";
		static char s1[] = "abc", s2[] = "abd", s3[] = "same", h[] = "hello";
		int r = 0;
		for (int i = 0; i < 3; i++)
			r += cmp(a, b, 10);
		for (int i = 0; i < 2; i++)
			r += bcmp_(a, b, 20);
		for (int i = 0; i < 4; i++)
			r += (int)len(h);
		for (int i = 0; i < 5; i++)
			r += scmp(s1, s2) < 0;
		r += scmp(s3, s3);
		return r == 20 + 5 ? 0 : 4;
	}
	return 2;
}
