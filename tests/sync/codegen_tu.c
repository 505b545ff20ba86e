/* Compiled by codegen_test.cpp with clang and gcc at -O2 -mno-sse (x86-64)
 * and -mgeneral-regs-only (arm64), then disassembled: the primitives of
 * uarch.h must survive any flags. With -DCODEGEN_BUILTIN the same code uses
 * the compiler's builtins instead, which clang drops under -mno-sse (seed
 * 000): the test sees that too, so it can tell the difference. */
#include "uarch.h"

#ifdef CODEGEN_BUILTIN
#define PREFETCH(p) __builtin_prefetch((p), 0, 3)
#define PREFETCHW(p) __builtin_prefetch((p), 1, 3)
#define SMP_MB() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#else
#define PREFETCH(p) uarch_prefetch(p)
#define PREFETCHW(p) uarch_prefetchw(p)
#define SMP_MB() uarch_smp_mb()
#endif

struct node {
	struct node *next;
	long value;
};

void cg_prefetch(const void *p) { PREFETCH(p); }
void cg_prefetchw(const void *p) { PREFETCHW(p); }
void cg_smp_mb(void) { SMP_MB(); }

/* A list walk prefetching the next node, as the kernel's callers do. */
long cg_walk(const struct node *n)
{
	long sum = 0;
	while (n) {
		PREFETCH(n->next);
		sum += n->value;
		n = n->next;
	}
	return sum;
}

/* Store, full barrier, load: the store-buffering pattern. */
long cg_publish(long *flag, const long *other)
{
	*flag = 1;
	SMP_MB();
	return *other;
}

/* Prefetch for write before an update. */
void cg_bump(long *counter)
{
	PREFETCHW(counter);
	*counter += 1;
}
