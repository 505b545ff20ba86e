// x86-64 barriers and prefetches behind the exported names.
#include "arch/x86_64/sync.h"
#include "arch/x86_64/mem.h"
#include <stdint.h>

// Seed 003: a locked RMW orders like mfence for ordinary memory and costs
// about half. -132(%rsp): below the 128-byte red zone, so it never touches
// the caller's data; not 0(%rsp), which the following ret reads (that
// would add a false dependency on the locked op).
void uarch_x86_64_smp_mb_lock_add(void)
{
	__asm__ __volatile__("lock; addl $0,-132(%%rsp)" ::: "memory", "cc");
}

// For comparison (benchmarks, tunables): what the kernel used before seed 003.
void uarch_x86_64_smp_mb_mfence(void)
{
	__asm__ __volatile__("mfence" ::: "memory");
}

// The stride: bytes between prefetches, a power of two >= 16 set by the
// binder from the plan (every line by default, see select.cpp).
static uint32_t stride_shift = 6;

namespace uarch {
void set_prefetch_stride(uint32_t stride)
{
	uint32_t s = 4;
	while ((1u << s) < stride && s < 12)
		s++;
	stride_shift = s;
}
} // namespace uarch

// Prefetches every stride-sized block that [p, p + len) touches. Prefetch
// never faults, and no load is made, so any address is safe.
void uarch_x86_64_prefetch_range_t0(const void *p, size_t len)
{
	if (!len)
		return;
	uintptr_t mask = (uintptr_t(1) << stride_shift) - 1;
	uintptr_t a = uintptr_t(p) & ~mask;
	uintptr_t last = uintptr_t(p) + (len - 1);
	if (last < uintptr_t(p))          // wrapped: stop at the top of the address space
		last = ~uintptr_t(0);
	last &= ~mask;
	// Invariant: every block below a within [p, p + len) is prefetched.
	for (;;) {
		__asm__ __volatile__("prefetcht0 (%0)" :: "r"(a));
		if (a == last)
			break;
		a += mask + 1;
	}
}

void uarch_x86_64_prefetchw_w(const void *p)
{
	__asm__ __volatile__("prefetchw (%0)" :: "r"(p));
}

void uarch_x86_64_prefetchw_t0(const void *p)
{
	__asm__ __volatile__("prefetcht0 (%0)" :: "r"(p));
}
