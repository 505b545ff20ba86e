#include "generic/params.h"
#include "generic/prefetch_blocks.h"
#include "arch/x86_64/mem.h"

namespace uarch {

MemParams mem_params;

void set_arch_params(const Plan &p)
{
	mem_params.movsb_min = p.mem.movsb_min;
	mem_params.movsb_max = p.mem.movsb_max;
	mem_params.stosb_min = p.mem.stosb_min;
	mem_params.stosb_max = p.mem.stosb_max;
	mem_params.nt_min = p.mem.nt_min;
	set_prefetch_stride(p.mem.prefetch_stride);
}

} // namespace uarch
