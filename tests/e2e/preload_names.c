/* Every name libuarch_preload.so replaces, called directly (no fortify
 * rewriting, no builtins), compared with the C library's own definition of
 * the same name (dlsym on libc.so.6's handle) over sizes and alignments.
 * Under LD_PRELOAD it first checks that each name resolves into
 * libuarch_preload.so. The _chk forms must abort through __chk_fail with the
 * destination untouched when dstlen < n: checked in a child process writing
 * to shared memory. Prints one line per name and a summary. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

typedef void *(*copy_fn)(void *, const void *, size_t);
typedef void *(*copy_chk_fn)(void *, const void *, size_t, size_t);
typedef void *(*set_fn)(void *, int, size_t);
typedef void *(*set_chk_fn)(void *, int, size_t, size_t);
typedef void (*zero_fn)(void *, size_t);
typedef void (*zero_chk_fn)(void *, size_t, size_t);

enum kind { k_copy, k_move, k_pcopy, k_set, k_zero, k_copy_chk, k_move_chk, k_pcopy_chk, k_set_chk, k_zero_chk };
/* Each (op, form) of src/table/libc_names.def as the kind of call it takes:
 * a row of a new form fails to compile here until it is given one. */
enum {
	memcpy_entry = k_copy, memmove_entry = k_move, memset_entry = k_set, memcpy_pcpy = k_pcopy,
	memset_zero = k_zero, memset_ezero = k_zero, memcpy_chk_copy = k_copy_chk, memmove_chk_copy = k_move_chk,
	memcpy_chk_pcpy = k_pcopy_chk, memset_chk_set = k_set_chk, memset_chk_ezero = k_zero_chk,
};
static const struct {
	const char *name;
	enum kind kind;
} names[] = {
#define UARCH_LIBC_NAME(name, op, form) {#name, (enum kind)op##_##form},
#include "table/libc_names.def"
#undef UARCH_LIBC_NAME
};
#define N_NAMES (sizeof names / sizeof names[0])

enum { BUF = 20000 };
static unsigned char a_src[BUF], a_dst[BUF], b_dst[BUF];

static uint64_t rng = 0x243f6a8885a308d3u;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Runs op on dst (one of a_dst / b_dst) and returns what it returned, as an
 * offset from dst (or -1 for void functions). */
static long run(void *fn, enum kind k, unsigned char *dst, size_t off, size_t soff, size_t n, int c,
		size_t dstlen)
{
	void *d = dst + off, *r = NULL;
	const void *s = k == k_move || k == k_move_chk ? (const void *)(dst + soff) : (const void *)(a_src + soff);
	switch (k) {
	case k_copy: case k_move: case k_pcopy: r = ((copy_fn)fn)(d, s, n); break;
	case k_copy_chk: case k_move_chk: case k_pcopy_chk: r = ((copy_chk_fn)fn)(d, s, n, dstlen); break;
	case k_set: r = ((set_fn)fn)(d, c, n); break;
	case k_set_chk: r = ((set_chk_fn)fn)(d, c, n, dstlen); break;
	case k_zero: ((zero_fn)fn)(d, n); return -1;
	case k_zero_chk: ((zero_chk_fn)fn)(d, n, dstlen); return -1;
	}
	return (long)((unsigned char *)r - dst);
}

static int compare(const char *name, enum kind k, void *mine, void *ref)
{
	int bad = 0;
	size_t cases = 0;
	for (size_t i = 0; i < BUF; i++)
		a_src[i] = (unsigned char)next();
	for (size_t t = 0; t < 3000 && !bad; t++) {
		size_t n = t < 1100 ? t : next() % (BUF / 2);
		size_t off = next() % 64, soff = next() % 64;
		if (k == k_move || k == k_move_chk)   /* overlap either way, or none */
			soff = off + n / 2 < BUF / 2 ? (next() & 1 ? off + (next() % 70) : (off > 8 ? off - 8 : 0)) : 0;
		if (soff + n > BUF || off + n > BUF)
			continue;
		int c = (int)(next() & 0x3ff);
		size_t dstlen = n + next() % 3;   /* never too small here */
		memcpy(a_dst, a_src, BUF);
		memcpy(b_dst, a_src, BUF);
		long ra = run(mine, k, a_dst, off, soff, n, c, dstlen);
		long rb = run(ref, k, b_dst, off, soff, n, c, dstlen);
		cases++;
		if (ra != rb || memcmp(a_dst, b_dst, BUF) != 0) {
			printf("%s: differs from the C library at n=%zu off=%zu soff=%zu (returned %ld, want %ld)\n",
			       name, n, off, soff, ra, rb);
			bad = 1;
		}
	}
	if (!bad)
		printf("%s: %zu cases match the C library\n", name, cases);
	return bad;
}

/* dstlen < n: the child must die of SIGABRT before writing a byte. */
static int overflow_aborts(const char *name, enum kind k, void *fn)
{
	unsigned char *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		return 1;
	for (int i = 0; i < 4096; i++)
		shared[i] = 0x5a;
	fflush(stdout);
	pid_t p = fork();
	if (p == 0) {
		/* stderr stays: the C library's message is part of the contract. */
		void *d = shared + 64;
		if (k == k_set_chk)
			((set_chk_fn)fn)(d, 0, 100, 99);
		else if (k == k_zero_chk)
			((zero_chk_fn)fn)(d, 100, 99);
		else
			((copy_chk_fn)fn)(d, a_src, 100, 99);
		_exit(0);
	}
	int st = 0;
	waitpid(p, &st, 0);
	int untouched = 1;
	for (int i = 0; i < 4096; i++)
		untouched &= shared[i] == 0x5a;
	munmap(shared, 4096);
	int ok = WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT && untouched;
	printf("%s: dstlen 99 < n 100: %s%s\n", name,
	       WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "exited normally",
	       untouched ? ", destination untouched" : ", DESTINATION WRITTEN");
	return !ok;
}

int main(void)
{
	const char *expect = getenv("E2E_EXPECT_OBJECT");   /* e.g. "libuarch_preload.so" */
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	if (!libc) {
		printf("cannot find libc.so.6: %s\n", dlerror());
		return 1;
	}
	int bad = 0, checked = 0;
	for (size_t i = 0; i < N_NAMES; i++) {
		void *mine = dlsym(RTLD_DEFAULT, names[i].name);
		void *ref = dlsym(libc, names[i].name);
		if (!mine || !ref) {
			printf("%s: not found (%s)\n", names[i].name, mine ? "in libc" : "at all");
			bad = 1;
			continue;
		}
		Dl_info info;
		const char *obj = dladdr(mine, &info) && info.dli_fname ? info.dli_fname : "?";
		if (expect && !strstr(obj, expect)) {
			printf("%s: resolved to %s, not %s\n", names[i].name, obj, expect);
			bad = 1;
			continue;
		}
		if (expect && mine == ref) {
			printf("%s: same address as the C library's\n", names[i].name);
			bad = 1;
			continue;
		}
		bad |= compare(names[i].name, names[i].kind, mine, ref);
		if (names[i].kind >= k_copy_chk)
			bad |= overflow_aborts(names[i].name, names[i].kind, mine);
		checked++;
	}
	printf("%d of %zu names checked, %s\n", checked, N_NAMES, bad ? "FAILED" : "all ok");
	return bad;
}
