// arm64 barriers and prefetches behind the exported names.
#include "arch/aarch64/sync.h"

// A full barrier between CPUs of the inner shareable domain (every CPU a
// process can run on): orders all earlier loads and stores before all
// later ones. The rmb/wmb forms (dmb ishld, dmb ishst) are inline in
// uarch.h and plain functions in bind.cpp; they are not dispatched.
void uarch_aarch64_smp_mb_dmb(void)
{
	__asm__ __volatile__("dmb ish" ::: "memory");
}

// Prefetches (for reading, into L1) every stride-sized block that
// [p, p + len) touches. prfm never faults, whatever the address.
void uarch_aarch64_prefetch_range_prfm(const void *p, size_t len)
{
	uarch::for_each_prefetch_block(uintptr_t(p), len, uarch::prefetch_stride_shift(),
				       [](uintptr_t a) { __asm__ __volatile__("prfm pldl1keep, [%0]" :: "r"(a)); });
}

// Prefetch for a store: the line arrives in a unique state, so the store
// that follows needs no second coherence transaction.
void uarch_aarch64_prefetchw_prfm(const void *p)
{
	__asm__ __volatile__("prfm pstl1keep, [%0]" :: "r"(p));
}
