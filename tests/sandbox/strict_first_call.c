/* Every memcpy-family call survives SECCOMP_MODE_STRICT as the process's
 * first call of its name, at every size class from 1 B to 64 MiB.
 *
 * Strict mode allows read, write, _exit and sigreturn; any other system
 * call kills the process with SIGKILL. For each case a child process is
 * forked (the parent never calls the functions under test, so the child's
 * call is the first in its process: an unbound PLT slot, an unbound
 * function pointer), allocates and fills its buffers, enters strict mode,
 * makes the one call, checks every byte and the return value, writes one
 * line and leaves with the raw exit system call.
 *
 * Built twice: with UARCH_API, it calls uarch_memcpy, uarch_memmove and
 * uarch_memset (linked to libuarch.so: ifunc or function-pointer build);
 * without, the twelve C library names (run under the preload library, or
 * linked statically with --wrap). Usage: strict-first-call [SIZE...];
 * prints one line per case and "N of N cases survived with the right
 * bytes"; exits 1 on any failure. */
#define _GNU_SOURCE
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(UARCH_API)
#include "uarch.h"
#define COPY uarch_memcpy
#define MOVE uarch_memmove
#define SET uarch_memset
#else
#define COPY memcpy
#define MOVE memmove
#define SET memset
void *__mempcpy(void *, const void *, size_t);
void *__memcpy_chk(void *, const void *, size_t, size_t);
void *__memmove_chk(void *, const void *, size_t, size_t);
void *__memset_chk(void *, int, size_t, size_t);
void *__mempcpy_chk(void *, const void *, size_t, size_t);
void __explicit_bzero_chk(void *, size_t, size_t);
#endif

enum kind { copy, move_fwd, move_bwd, fill, zero };
struct op {
	const char *name;
	enum kind kind;
};

static const struct op ops[] = {
	{"memcpy", copy}, {"memmove forward", move_fwd}, {"memmove backward", move_bwd}, {"memset", fill},
#if !defined(UARCH_API)
	{"mempcpy", copy}, {"__mempcpy", copy}, {"bzero", zero}, {"explicit_bzero", zero},
	{"__memcpy_chk", copy}, {"__memmove_chk", move_bwd}, {"__memset_chk", fill}, {"__mempcpy_chk", copy},
	{"__explicit_bzero_chk", zero},
#endif
};

/* No call of the family outside the one under test: byte loops through
 * volatile pointers, which no compiler turns into memset or memcpy. */
static void pattern(volatile unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)((i * 131 + seed) >> 3 ^ i);
}

static unsigned char expect(size_t i, unsigned seed) { return (unsigned char)((i * 131 + seed) >> 3 ^ i); }

static void say_and_exit(const char *msg, int code)
{
	size_t n = 0;
	while (msg[n])
		n++;
	syscall(SYS_write, 1, msg, n);
	syscall(SYS_exit, code);   /* exit_group is not allowed in strict mode */
	for (;;)
		;
}

/* The child: one call, in strict mode. */
static void run_case(const struct op *o, size_t n)
{
	/* [n + gap | src: n | gap | n]: a disjoint dst past src, or one that
	 * overlaps it from below (forward) or above (backward) by all but d
	 * bytes; odd offsets, so that nothing is aligned. */
	const size_t gap = 4096 + 64 + 3, d = 1 + n / 4;
	volatile unsigned char *buf = malloc(3 * n + 2 * gap + 1);
	if (!buf)
		say_and_exit("malloc failed\n", 3);
	unsigned char *src = (unsigned char *)buf + n + gap + 1, *dst = src + n + gap;
	if (o->kind == move_fwd)
		dst = src - d;
	else if (o->kind == move_bwd)
		dst = src + d;
	pattern(src, n, 7);
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) != 0)
		say_and_exit("seccomp strict mode refused\n", 77);
	void *ret = NULL, *want_ret = dst;
	const char *nm = o->name;
#define IS(s) (strcmp(nm, s) == 0)
	if (IS("memcpy")) ret = COPY(dst, src, n);
	else if (o->kind == move_fwd || IS("memmove backward")) ret = MOVE(dst, src, n);
	else if (IS("memset")) ret = SET(dst, 0x5a, n);
#if !defined(UARCH_API)
	else if (IS("mempcpy")) ret = mempcpy(dst, src, n), want_ret = dst + n;
	else if (IS("__mempcpy")) ret = __mempcpy(dst, src, n), want_ret = dst + n;
	else if (IS("bzero")) bzero(dst, n), ret = dst;
	else if (IS("explicit_bzero")) explicit_bzero(dst, n), ret = dst;
	else if (IS("__memcpy_chk")) ret = __memcpy_chk(dst, src, n, n);
	else if (IS("__memmove_chk")) ret = __memmove_chk(dst, src, n, n + 1);
	else if (IS("__memset_chk")) ret = __memset_chk(dst, 0x5a, n, n);
	else if (IS("__mempcpy_chk")) ret = __mempcpy_chk(dst, src, n, n), want_ret = dst + n;
	else if (IS("__explicit_bzero_chk")) __explicit_bzero_chk(dst, n, n), ret = dst;
#endif
	else say_and_exit("unknown op\n", 3);
	if (ret != want_ret)
		say_and_exit("wrong return value\n", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char w = o->kind == fill ? 0x5a : o->kind == zero ? 0 : expect(i, 7);
		if (dst[i] != w)
			say_and_exit("wrong byte\n", 1);
	}
	say_and_exit("", 0);
}

int main(int argc, char **argv)
{
	static const size_t classes[] = {1, 3, 8, 15, 16, 31, 33, 64, 100, 128, 255, 511, 1000, 2049, 4096, 8200,
					 20000, 65536, 200000, 300000, 1 << 20, 4 << 20, 16 << 20, 64 << 20};
	size_t sizes[64], nsizes = 0;
	for (int i = 1; i < argc && nsizes < 64; i++)
		sizes[nsizes++] = strtoull(argv[i], NULL, 0);
	if (!nsizes)
		for (; nsizes < sizeof classes / sizeof classes[0]; nsizes++)
			sizes[nsizes] = classes[nsizes];
	/* Probe once: a kernel without seccomp skips the test. */
	pid_t p = fork();
	if (p == 0) {
		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) != 0)
			syscall(SYS_exit, 77);
		syscall(SYS_exit, 0);
	}
	int st;
	if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) == 77) {
		printf("skipped: SECCOMP_MODE_STRICT is not available here\n");
		return 77;
	}
	int cases = 0, good = 0;
	for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
		for (size_t s = 0; s < nsizes; s++) {
			fflush(stdout);
			p = fork();
			if (p == 0)
				run_case(&ops[k], sizes[s]);
			cases++;
			const char *why = "fork failed";
			if (p > 0 && waitpid(p, &st, 0) == p) {
				if (WIFSIGNALED(st))
					why = WTERMSIG(st) == SIGKILL ? "killed: a system call inside the call" : "killed by a signal";
				else
					why = WEXITSTATUS(st) == 0 ? NULL : "wrong result";
			}
			if (!why)
				good++;
			printf("%s %s %zu%s%s\n", why ? "FAIL" : "ok  ", ops[k].name, sizes[s], why ? ": " : "",
			       why ? why : "");
		}
	printf("%d of %d cases survived with the right bytes\n", good, cases);
	return good == cases ? 0 : 1;
}
