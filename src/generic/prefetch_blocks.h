// prefetch_range's address walk and stride, shared by every architecture's
// variant (only the prefetch instruction differs).
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace uarch {

// prefetch_range's stride: rounded up to a power of two and clamped to
// [16, 4096]. Called by the binder (set_arch_params) before publishing.
void set_prefetch_stride(uint32_t stride) __attribute__((visibility("hidden")));
// log2 of the stride prefetch_range uses now.
uint32_t prefetch_stride_shift() __attribute__((visibility("hidden")));

// Calls f(a) once for every (1 << shift)-byte block that [p, p + len)
// touches, in ascending order, a being the block's base. Does nothing for
// len == 0. Where p + len wraps past the top of the address space it stops
// at the last block. Integer arithmetic only: any p is allowed, and
// nothing is loaded. Apart from the variants so that tests can run it with
// a recording f.
template <class F>
inline void for_each_prefetch_block(uintptr_t p, size_t len, uint32_t shift, F &&f)
{
	if (!len)
		return;
	const uintptr_t mask = (uintptr_t(1) << shift) - 1;
	uintptr_t last = p + (len - 1);
	if (last < p)                     // wrapped
		last = ~uintptr_t(0);
	last &= ~mask;
	// Invariant: every block of [p, p + len) below a has been visited once.
	for (uintptr_t a = p & ~mask;; a += mask + 1) {
		f(a);
		if (a == last)            // not a > last: a + stride may wrap to 0
			break;
	}
}

} // namespace uarch
