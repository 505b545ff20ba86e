// arm64 barriers and prefetches as exported, dispatchable functions.
//
// cpu_relax is `yield` (uarch.h, bind.cpp), as in Linux's arm64 cpu_relax.
// On most cores without SMT yield retires as a NOP, so a spin loop polls as
// fast as it can; some projects (Rust's spin_loop hint, several databases'
// spin locks) use `isb` instead, which stalls for the pipeline refill and
// so slows polling on Neoverse N1/V1-class cores. Which is better depends on
// the core and the contention; nothing about it has been measured on arm64
// hardware for this library (it has only run under qemu-user), so the
// kernel's choice stays.
#pragma once
#include <stddef.h>
#include <stdint.h>

extern "C" {
#define HIDDEN __attribute__((visibility("hidden")))
void uarch_aarch64_smp_mb_dmb(void) HIDDEN;                               // dmb ish
void uarch_aarch64_prefetch_range_prfm(const void *p, size_t len) HIDDEN;  // prfm pldl1keep per stride
void uarch_aarch64_prefetchw_prfm(const void *p) HIDDEN;                  // prfm pstl1keep
#undef HIDDEN
}

namespace uarch {

// prefetch_range's stride: rounded up to a power of two and clamped to
// [16, 4096]. Called by the binder (set_arch_params) before publishing.
void set_prefetch_stride(uint32_t stride) __attribute__((visibility("hidden")));
// log2 of the stride prefetch_range uses now.
uint32_t prefetch_stride_shift() __attribute__((visibility("hidden")));

// The address loop of prefetch_range (the same contract as on x86-64, so
// the sync tests run on both): f(a) once for every (1 << shift)-byte block
// that [p, p + len) touches, ascending, a = the block's base; nothing for
// len == 0; stops at the last block where p + len wraps. Integer arithmetic
// only, nothing is loaded.
template <class F>
inline void for_each_prefetch_block(uintptr_t p, size_t len, uint32_t shift, F &&f)
{
	if (!len)
		return;
	const uintptr_t step = uintptr_t(1) << shift;
	uintptr_t end = p + (len - 1);
	if (end < p)
		end = ~uintptr_t(0);
	const uintptr_t last = end & ~(step - 1);
	// Invariant: the blocks of [p, p + len) below a were each visited once.
	uintptr_t a = p & ~(step - 1);
	for (;;) {
		f(a);
		if (a == last)            // a + step may wrap to 0: compare, not <
			return;
		a += step;
	}
}

} // namespace uarch
