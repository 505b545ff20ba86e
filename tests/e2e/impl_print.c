/* Prints the variant bound to every op, one "op=variant" line each, after
 * checking that the bound memcpy/memmove/memset give the right bytes.
 * Built three ways (see meson.build): a PIE linked to libuarch.so, a
 * -static -fstack-protector-all program linked to libuarch.a, and a program
 * that knows no uarch symbol at link time and finds uarch_preload_impl with
 * dlsym(RTLD_DEFAULT) when run under LD_PRELOAD=libuarch_preload.so.
 * Lines starting with '#' are information, not bindings.
 * E2E_EDIT_TUNABLES=VALUE: first sets UARCH_TUNABLES=VALUE (or, for "-",
 * unsets it), before any uarch call: the library reads the environment
 * the program started with, whatever the program did to its copy. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#ifdef E2E_PRELOAD
typedef const char *(*impl_fn)(const char *);
typedef const char *(*op_fn)(unsigned);
typedef void *(*copy_fn)(void *, const void *, size_t);
typedef void *(*set_fn)(void *, int, size_t);
#else
#include "uarch.h"
#endif


static unsigned char src[70000], dst[70000], ref[70000];

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Byte loops through volatile pointers: the compiler cannot turn them into
 * calls to the functions under test. */
static void ref_copy(unsigned char *d, const unsigned char *s, size_t n)
{
	volatile unsigned char *vd = d;
	for (size_t i = 0; i < n; i++)
		vd[i] = s[i];
}

static int check(void *(*cpy)(void *, const void *, size_t), void *(*mov)(void *, const void *, size_t),
		 void *(*set)(void *, int, size_t))
{
	static const size_t big[] = {4095, 4096, 4097, 8191, 65536, 65537, 69999};
	int bad = 0;
	for (size_t i = 0; i < sizeof src; i++)
		src[i] = (unsigned char)next();
	for (size_t k = 0; k < 600 + sizeof big / sizeof big[0]; k++) {
		size_t n = k < 600 ? k : big[k - 600];
		size_t so = next() % 64, dof = next() % 64;
		if (n + 64 > sizeof src)
			so = dof = 0;
		memset(dst, 0xa5, sizeof dst);
		memset(ref, 0xa5, sizeof ref);
		ref_copy(ref + dof, src + so, n);
		if (cpy(dst + dof, src + so, n) != dst + dof || memcmp(dst, ref, sizeof dst) != 0) {
			printf("# memcpy wrong at n=%zu\n", n);
			bad = 1;
		}
		/* memmove: overlapping, both directions */
		ref_copy(ref, dst, sizeof ref);
		size_t shift = 1 + next() % 63;
		if (n + shift + 64 <= sizeof dst) {
			unsigned char tmp[70000];
			ref_copy(tmp, ref + dof, n);
			ref_copy(ref + dof + shift, tmp, n);
			if (mov(dst + dof + shift, dst + dof, n) != dst + dof + shift ||
			    memcmp(dst, ref, sizeof dst) != 0) {
				printf("# memmove wrong at n=%zu\n", n);
				bad = 1;
			}
		}
		ref_copy(ref, dst, sizeof ref);
		int c = (int)(next() & 0xff);
		{
			volatile unsigned char *vr = ref + dof;
			for (size_t i = 0; i < n; i++)
				vr[i] = (unsigned char)c;
		}
		if (set(dst + dof, c | 0x1200, n) != dst + dof || memcmp(dst, ref, sizeof dst) != 0) {
			printf("# memset wrong at n=%zu\n", n);
			bad = 1;
		}
	}
	return bad;
}

int main(void)
{
	const char *edit = getenv("E2E_EDIT_TUNABLES");
	if (edit && !strcmp(edit, "-"))
		unsetenv("UARCH_TUNABLES");
	else if (edit)
		setenv("UARCH_TUNABLES", edit, 1);
#ifdef E2E_PRELOAD
	impl_fn impl = (impl_fn)dlsym(RTLD_DEFAULT, "uarch_preload_impl");
	op_fn op = (op_fn)dlsym(RTLD_DEFAULT, "uarch_preload_op");
	if (!impl || !op) {
		printf("# uarch_preload_impl not found: run under LD_PRELOAD=libuarch_preload.so\n");
		return 2;
	}
	/* The C library's names, as this program resolved them. */
	copy_fn volatile cpy = memcpy;
	copy_fn volatile mov = memmove;
	set_fn volatile set = memset;
	Dl_info info;
	if (dladdr((void *)cpy, &info) && info.dli_fname)
		printf("# memcpy from %s\n", info.dli_fname);
#else
	const char *(*impl)(const char *) = uarch_impl;
	const char *(*op)(unsigned) = uarch_op;
	void *(*volatile cpy)(void *, const void *, size_t) = uarch_memcpy;
	void *(*volatile mov)(void *, const void *, size_t) = uarch_memmove;
	void *(*volatile set)(void *, int, size_t) = uarch_memset;
#endif
	printf("# at_secure=%lu uid=%d euid=%d gid=%d egid=%d\n", getauxval(AT_SECURE), (int)getuid(),
	       (int)geteuid(), (int)getgid(), (int)getegid());
	int bad = check(cpy, mov, set);
	for (unsigned i = 0; op(i); i++) {
		const char *v = impl(op(i));
		printf("%s=%s\n", op(i), v ? v : "(null)");
		if (!v)
			bad = 1;
	}
	if (impl("no_such_op") != NULL) {
		printf("# uarch_impl(\"no_such_op\") is not NULL\n");
		bad = 1;
	}
	printf("# %s\n", bad ? "FAILED" : "ok");
	return bad;
}
