#include "generic/prefetch_blocks.h"

namespace uarch {

// log2 of the bytes between prefetches; the binder sets it from the plan
// before any caller can see a prefetch_range variant.
static uint32_t stride_shift = 6;

void set_prefetch_stride(uint32_t stride)
{
	uint32_t s = 4;
	while ((1u << s) < stride && s < 12)
		s++;
	__atomic_store_n(&stride_shift, s, __ATOMIC_RELAXED);
}

uint32_t prefetch_stride_shift()
{
	return __atomic_load_n(&stride_shift, __ATOMIC_RELAXED);
}

} // namespace uarch
