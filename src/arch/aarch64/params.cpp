// Hands the plan's thresholds to the arm64 variants.
#include <stddef.h>
#include "generic/params.h"
#include "arch/aarch64/mem.h"
#include "arch/aarch64/sync.h"

// Seed 002's values until the binder runs, so a variant called by name (in
// tests) behaves as on an AmpereOne. Plain integers: no relocation.
uarch_aarch64_mem_params_t uarch_aarch64_mem_params = {4096, 2048};

static_assert(offsetof(uarch_aarch64_mem_params_t, prefetch_copy_min) == 0, "mem_ampereone.S reads offset 0");
static_assert(offsetof(uarch_aarch64_mem_params_t, prefetch_distance) == 8, "mem_ampereone.S reads offset 8");

namespace uarch {

void set_arch_params(const Plan &p)
{
	// The prefetching loop needs at least 256 bytes (a 128-byte block plus
	// the 128-byte tail it keeps in registers).
	uint64_t min = p.mem.prefetch_copy_min;
	if (min && min < 256)
		min = 256;
	uint64_t dist = p.mem.prefetch_distance;
	if (dist == 0 || dist > (1u << 20))
		dist = 2048;
	uarch_aarch64_mem_params.prefetch_copy_min = min;
	uarch_aarch64_mem_params.prefetch_distance = dist;
	set_prefetch_stride(p.mem.prefetch_stride);
}

} // namespace uarch
