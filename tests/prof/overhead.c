#define _POSIX_C_SOURCE 200809L
/* The recorder's cost per call: times `calls` memcpy calls of sizes 0..63
 * (cache-resident, through a volatile pointer to the exported name) and
 * prints nanoseconds per call. Run it under libuarch_preload.so and under
 * libuarch_record.so: the difference is what recording adds. prof_overhead.py
 * runs it under callgrind and compares instructions, not the printed time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *(*volatile cpy)(void *, const void *, size_t) = memcpy;
static _Alignas(64) char a[4096], b[4096];

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 20000000;
	void *(*f)(void *, const void *, size_t) = cpy;
	for (long i = 0; i < 100000; i++)   /* warm up, bind, claim the block */
		f(a, b, (size_t)(i & 63));
	struct timespec t0, t1;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	for (long i = 0; i < calls; i++)
		f(a + (i & 7) * 64, b + (i & 15) * 8, (size_t)((i * 13) & 63));
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	double ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
	printf("%.3f\n", ns / (double)calls);
	return 0;
}
