/* dlopen of the uarch libraries long after start-up, use from several
 * threads, dlclose, and again: the binding must happen at every load
 * (resolvers or constructors), work from threads that start at once, and
 * leave nothing behind at unload. This program links no uarch library.
 * usage: hardening-dlopen-cycle LIB [LIB...]  */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef void *(*copy_fn)(void *, const void *, size_t);
typedef void *(*set_fn)(void *, int, size_t);
typedef const char *(*impl_fn)(const char *);

struct lib {
	copy_fn cpy, mov;
	set_fn set;
	impl_fn impl;
};

static int check_once(const struct lib *l, unsigned seed)
{
	enum { N = 70000 };
	unsigned char *a = malloc(N + 64), *b = malloc(N + 64);
	int bad = 0;
	if (!a || !b)
		return 1;
	for (int round = 0; round < 40 && !bad; round++) {
		size_t n = (size_t)(seed * 2654435761u + (unsigned)round * 40503u) % N;
		size_t off = (size_t)round % 64;
		for (size_t i = 0; i < n; i++)
			a[i] = (unsigned char)(i * 31 + seed + (unsigned)round);
		if (l->cpy(b + off, a, n) != b + off)
			bad = 1;
		for (size_t i = 0; i < n && !bad; i++)
			bad = b[off + i] != a[i];
		if (l->mov(b + 1, b, n) != b + 1)
			bad = 1;
		if (l->set(a, round, n) != a)
			bad = 1;
		for (size_t i = 0; i < n && !bad; i++)
			bad = a[i] != (unsigned char)round;
		if (!l->impl("memcpy") || l->impl("no_such_op"))
			bad = 1;
	}
	free(a);
	free(b);
	return bad;
}

static struct lib g_lib;
static volatile int g_go;

static void *worker(void *arg)
{
	while (!g_go)
		;
	return (void *)(intptr_t)check_once(&g_lib, (unsigned)(intptr_t)arg);
}

int main(int argc, char **argv)
{
	int bad = 0;
	for (int li = 1; li < argc; li++) {
		const char *path = argv[li];
		char first[32] = "";
		for (int cycle = 0; cycle < 25; cycle++) {
			void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
			if (!h) {
				printf("dlopen %s: %s\n", path, dlerror());
				return 1;
			}
			/* libuarch.so's API, or the preload library's C-library names
			 * and its query (it exports no uarch_* API of its own). */
			int pre = dlsym(h, "uarch_memcpy") == NULL;
			g_lib.cpy = (copy_fn)dlsym(h, pre ? "memcpy" : "uarch_memcpy");
			g_lib.mov = (copy_fn)dlsym(h, pre ? "memmove" : "uarch_memmove");
			g_lib.set = (set_fn)dlsym(h, pre ? "memset" : "uarch_memset");
			g_lib.impl = (impl_fn)dlsym(h, pre ? "uarch_preload_impl" : "uarch_impl");
			if (!g_lib.cpy || !g_lib.mov || !g_lib.set || !g_lib.impl) {
				printf("%s: missing symbols\n", path);
				return 1;
			}
			if (!first[0])
				snprintf(first, sizeof first, "%s", g_lib.impl("memcpy"));
			else if (strcmp(first, g_lib.impl("memcpy")) != 0) {
				printf("%s: cycle %d bound memcpy=%s, first load %s\n", path, cycle,
				       g_lib.impl("memcpy"), first);
				bad = 1;
			}
			/* Threads that all start calling at once, right after the load. */
			pthread_t t[6];
			g_go = 0;
			for (int i = 0; i < 6; i++)
				pthread_create(&t[i], NULL, worker, (void *)(intptr_t)(cycle * 6 + i));
			g_go = 1;
			bad |= check_once(&g_lib, (unsigned)cycle);
			for (int i = 0; i < 6; i++) {
				void *r;
				pthread_join(t[i], &r);
				bad |= (int)(intptr_t)r;
			}
			if (dlclose(h) != 0) {
				printf("dlclose %s: %s\n", path, dlerror());
				bad = 1;
			}
			void *still = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
			if (still) {
				printf("%s: still loaded after dlclose (cycle %d)\n", path, cycle);
				dlclose(still);
				bad = 1;
			}
		}
		printf("%s: 25 dlopen/use from 7 threads/dlclose cycles, memcpy=%s: %s\n", path, first,
		       bad ? "FAILED" : "ok");
	}
	return bad;
}
