/* A program linked with -luarch, run under LD_PRELOAD of the preload
 * library or the recorder: its uarch_* calls must bind to libuarch.so
 * (uarch_memcpy@UARCH_0), never to a copy in the preloaded library, which
 * would satisfy them if it exported the names unversioned. Exits 1 naming
 * each function bound elsewhere. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include "uarch.h"

static int from_libuarch(const char *name, void *fn)
{
	Dl_info di = {0};
	int ok = 0;
	if (dladdr(fn, &di) && di.dli_fname) {
		const char *base = strrchr(di.dli_fname, '/');
		ok = strncmp(base ? base + 1 : di.dli_fname, "libuarch.so", 11) == 0;
	}
	printf("%s: %s from %s\n", ok ? "ok" : "FAIL", name, di.dli_fname ? di.dli_fname : "(unknown)");
	return ok;
}

int main(void)
{
	/* Taken through the GOT in a PIE: the definition ld.so chose. */
	int ok = from_libuarch("uarch_memcpy", (void *)&uarch_memcpy) &
		 from_libuarch("uarch_memmove", (void *)&uarch_memmove) &
		 from_libuarch("uarch_memset", (void *)&uarch_memset) &
		 from_libuarch("uarch_impl", (void *)&uarch_impl) &
		 from_libuarch("uarch_op", (void *)&uarch_op);
	char a[32] = "through libuarch.so", b[32];
	uarch_memcpy(b, a, sizeof a);
	if (strcmp(a, b) != 0 || !uarch_impl("memcpy")) {
		printf("FAIL: uarch_memcpy or uarch_impl gave a wrong answer\n");
		ok = 0;
	}
	return ok ? 0 : 1;
}
