// x86-64 barriers and prefetches behind the exported names.
#include "arch/x86_64/sync.h"
#include <stdint.h>

// Seed 003: a locked RMW orders like mfence for ordinary (write-back)
// memory and costs a fraction. Inline (uarch.h) the slot must be below the
// caller's red zone, -132(%rsp), which may hold live spills. Here the
// barrier is a function of its own: its red zone holds nothing, so the
// slot is the red zone's lowest word, -128(%rsp): never the return address
// at 0(%rsp) that the ret loads next (a false dependency on the locked
// op), and inside what valgrind's memcheck treats as addressable, so
// programs that call the exported barrier stay clean under it (-132 is
// reported as an invalid access). Measured on Zen 3 across a page of stack
// depths: no slower than -132 (uarch-bench sync, call+lock cases). Adding
// 0 changes no byte, and rsp is 8-aligned, so the 4 bytes never split a
// cache line.
void uarch_x86_64_smp_mb_lock_add(void)
{
	__asm__ __volatile__("lock; addl $0,-128(%%rsp)" ::: "memory", "cc");
}

// For comparison (benchmarks, tunables): what the kernel used before seed
// 003. Unlike a locked op it also orders clflush, non-temporal stores and
// write-combining memory.
void uarch_x86_64_smp_mb_mfence(void)
{
	__asm__ __volatile__("mfence" ::: "memory");
}

// Prefetches every stride-sized block that [p, p + len) touches. prefetcht0
// never faults (not on NULL, kernel, non-canonical or PROT_NONE addresses)
// and no load is made, so any p and len are safe.
void uarch_x86_64_prefetch_range_t0(const void *p, size_t len)
{
	uarch::for_each_prefetch_block(uintptr_t(p), len, uarch::prefetch_stride_shift(),
				       [](uintptr_t a) { __asm__ __volatile__("prefetcht0 (%0)" :: "r"(a)); });
}

// PREFETCHW (CPUID 0x80000001 ECX bit 8): asks for the line in a writable
// state, saving the later ownership request.
void uarch_x86_64_prefetchw_w(const void *p)
{
	__asm__ __volatile__("prefetchw (%0)" :: "r"(p));
}

// Where PREFETCHW is missing: a read prefetch still brings the line close.
void uarch_x86_64_prefetchw_t0(const void *p)
{
	__asm__ __volatile__("prefetcht0 (%0)" :: "r"(p));
}
