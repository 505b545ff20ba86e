// Copies of 4-64 KiB, hot and out of the cache: the C library, uarch, bare
// rep movsb, and a 4 x 32 B avx2 loop with and without prefetches ahead of
// the destination (prefetchw) or the source. TSC ticks a call, median of
// 600 calls a variant, the variants interleaved.
//   gcc -O2 -mavx2 cold_copy.c -Lbuild -luarch -Wl,-rpath,$PWD/build
//   ./a.out [SRC_OFFSET]   (cold source at a page offset of SRC_OFFSET; 7)
#define _GNU_SOURCE
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <x86intrin.h>

typedef void (*cp_fn)(char *, const char *, size_t);

static void c_rep(char *d, const char *s, size_t n) { __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory"); }
static void c_libc(char *d, const char *s, size_t n) { memcpy(d, s, n); __asm__ volatile("" ::: "memory"); }
void *uarch_memcpy(void *, const void *, size_t);
static void c_uarch(char *d, const char *s, size_t n) { uarch_memcpy(d, s, n); __asm__ volatile("" ::: "memory"); }

// 4 x 32 B a round; head/tail unaligned; dst aligned stores in the loop.
static inline __attribute__((always_inline)) void loop_gen(char *d, const char *s, size_t n, int pw, int pr, int dist)
{
	__m256i h = _mm256_loadu_si256((const __m256i *)s), t = _mm256_loadu_si256((const __m256i *)(s + n - 32));
	char *dend = d + n;
	size_t skew = 32 - ((uintptr_t)d & 31);
	char *dd = d + skew; const char *ss = s + skew;
	size_t left = n - skew;
	while (left > 128) {
		if (pw) _mm_prefetch(dd + dist, _MM_HINT_ET0);
		if (pr) _mm_prefetch(ss + dist, _MM_HINT_T0);
		__m256i a = _mm256_loadu_si256((const __m256i *)ss), b = _mm256_loadu_si256((const __m256i *)(ss + 32));
		__m256i c = _mm256_loadu_si256((const __m256i *)(ss + 64)), e = _mm256_loadu_si256((const __m256i *)(ss + 96));
		_mm256_store_si256((__m256i *)dd, a); _mm256_store_si256((__m256i *)(dd + 32), b);
		_mm256_store_si256((__m256i *)(dd + 64), c); _mm256_store_si256((__m256i *)(dd + 96), e);
		dd += 128; ss += 128; left -= 128;
	}
	while (left > 32) { _mm256_store_si256((__m256i *)dd, _mm256_loadu_si256((const __m256i *)ss)); dd += 32; ss += 32; left -= 32; }
	_mm256_storeu_si256((__m256i *)(dend - 32), t);
	_mm256_storeu_si256((__m256i *)d, h);
}
static void c_loop(char *d, const char *s, size_t n) { loop_gen(d, s, n, 0, 0, 0); }
static void c_pw256(char *d, const char *s, size_t n) { loop_gen(d, s, n, 1, 0, 256); }
static void c_pw1k(char *d, const char *s, size_t n) { loop_gen(d, s, n, 1, 0, 1024); }
static void c_pr1k(char *d, const char *s, size_t n) { loop_gen(d, s, n, 0, 1, 1024); }
static void c_prw1k(char *d, const char *s, size_t n) { loop_gen(d, s, n, 1, 1, 1024); }
// prefetchw the whole destination first (every line), then the loop.
static void c_pwall(char *d, const char *s, size_t n) {
	for (size_t i = 0; i < n; i += 64) _mm_prefetch(d + i, _MM_HINT_ET0);
	loop_gen(d, s, n, 0, 0, 0);
}

static int cmpd(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }

int main(int argc, char **argv)
{
	size_t soff = argc > 1 ? strtoul(argv[1], 0, 0) : 7;
	size_t pool = (size_t)512 << 20;
	char *S = mmap(0, pool, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *D = mmap(0, pool, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(S, 1, pool); memset(D, 2, pool);
	struct { const char *name; cp_fn f; } v[] = {{"libc", c_libc}, {"uarch", c_uarch}, {"rep", c_rep}, {"loop", c_loop}, {"pw256", c_pw256},
		{"pw1k", c_pw1k}, {"pr1k", c_pr1k}, {"prw1k", c_prw1k}, {"pwall", c_pwall}};
	int nv = sizeof v / sizeof v[0];
	size_t sizes[] = {4096, 8192, 16384, 32768, 65536};
	int iters = 600;
	for (int mode = 0; mode < 3; mode++) {   // 0 hot, 1 cold both, 2 cold src hot dst
		printf("%s\n", mode == 0 ? "hot" : mode == 1 ? "cold src+dst" : "cold src, hot dst");
		printf("%8s", "size"); for (int k = 0; k < nv; k++) printf(" %8s", v[k].name); printf("\n");
		for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
			size_t n = sizes[si], slot = (n + 4096 + 4096) & ~(size_t)4095;
			// interleave: rounds over variants
			double *all[16]; for (int k = 0; k < nv; k++) all[k] = malloc(sizeof(double) * iters);
			size_t off = 0;
			for (int it = 0; it < iters; it++)
				for (int k0 = 0; k0 < nv; k0++) {
					int k = (k0 + it) % nv;
					char *d, *s;
					if (mode == 0) { d = D + 64; s = S + 64 + 7; }
					else { off += slot; if (off + slot > pool) off = 0; s = S + off + soff; d = mode == 1 ? D + off + 64 : D + 64; }
					unsigned aux; uint64_t a = __rdtscp(&aux);
					v[k].f(d, s, n);
					uint64_t b = __rdtscp(&aux);
					all[k][it] = (double)(b - a);
				}
			printf("%8zu", n);
			for (int k = 0; k < nv; k++) { qsort(all[k], iters, sizeof(double), cmpd); printf(" %8.0f", all[k][iters / 2]); free(all[k]); }
			printf("\n");
		}
	}
	return 0;
}
