/* A library whose ifunc resolver copies, fills and measures a string, as a
 * resolver built with -fno-builtin (or one that zeroes a large struct)
 * does. libresolver_user.so, bound at load (-z now), runs the resolver
 * while ld.so relocates it: under LD_PRELOAD, before the preload library
 * is relocated (ld.so relocates a preloaded library after every library
 * the program needs), so memcpy, memset and strlen are the preload
 * library's, not yet relocated. */
#include <stddef.h>
#include <string.h>

static char g_copy[512];
static int answer(void) { return 42; }
static int wrong(void) { return -1; }

static int (*resolve(void))(void)
{
	char buf[300];
	memset(buf, 'x', sizeof buf - 1);
	buf[sizeof buf - 1] = 0;
	memcpy(g_copy, buf, sizeof buf);
	memmove(g_copy + 1, g_copy, 200);
	return strlen(g_copy) == sizeof buf - 1 && memcmp(g_copy, buf, sizeof buf) == 0 ? answer : wrong;
}

int resolver_lib_answer(void) __attribute__((ifunc("resolve")));
