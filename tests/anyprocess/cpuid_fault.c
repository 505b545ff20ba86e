/* Under CPUID faulting (arch_prctl(ARCH_SET_CPUID, 0), which record-and-
 * replay debuggers set) a CPUID instruction kills the process with
 * SIGSEGV. uarch asks the CPU at load only: after it, the first copy, move
 * and fill of every size class given as arguments must run and give the
 * right bytes. Built three ways: the uarch_* API (-DCPUID_FAULT_API, libuarch),
 * the C library's names (under LD_PRELOAD), and static --wrap.
 * Exit 77 where the kernel or CPU has no CPUID faulting. */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef CPUID_FAULT_API
#include "uarch.h"
#define COPY uarch_memcpy
#define MOVE uarch_memmove
#define FILL uarch_memset
#else
#define COPY memcpy
#define MOVE memmove
#define FILL memset
#endif

int main(int argc, char **argv)
{
	if (syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0) != 0) {
		printf("skipped: CPUID faulting (ARCH_SET_CPUID) is not available here: %s\n", strerror(errno));
		return 77;
	}
	for (int i = 1; i < argc; i++) {
		size_t n = strtoull(argv[i], NULL, 10);
		unsigned char *a = malloc(n + 64), *b = malloc(n + 64);
		if (!a || !b)
			return 3;
		for (size_t k = 0; k < n + 64; k++)
			a[k] = (unsigned char)(k * 13 + 1);
		FILL(b, 0x5a, n + 64);
		COPY(b, a, n);
		MOVE(b + 1, b, n);
		for (size_t k = 0; k < n; k++)
			if (b[k + 1] != (unsigned char)(k * 13 + 1)) {
				printf("FAIL: %zu bytes: wrong byte at %zu\n", n, k);
				return 1;
			}
		free(a);
		free(b);
	}
	printf("%d sizes copied, moved and filled under CPUID faulting\n", argc - 1);
	return 0;
}
