#include "arch/params.h"
#include "arch/prefetch_blocks.h"
#include "arch/x86_64/mem.h"

namespace uarch {

MemParams mem_params;
int mem_params_pending;

// Each field is stored on its own (relaxed): a variant that reads them
// while they change sees a mix of old and new windows, and every mix
// copies correctly; the windows only choose among correct strategies.
void set_arch_params(const Plan &p)
{
	__atomic_store_n(&mem_params.movsb_min, p.mem.movsb_min, __ATOMIC_RELAXED);
	__atomic_store_n(&mem_params.movsb_max, p.mem.movsb_max, __ATOMIC_RELAXED);
	__atomic_store_n(&mem_params.stosb_min, p.mem.stosb_min, __ATOMIC_RELAXED);
	__atomic_store_n(&mem_params.stosb_max, p.mem.stosb_max, __ATOMIC_RELAXED);
	__atomic_store_n(&mem_params.nt_min, p.mem.nt_min, __ATOMIC_RELAXED);
	set_prefetch_stride(p.mem.prefetch_stride);
}

void defer_arch_params()
{
	__atomic_store_n(&mem_params_pending, 1, __ATOMIC_RELEASE);
}

void finish_mem_params()
{
	finish_deferred_plan();
	__atomic_store_n(&mem_params_pending, 0, __ATOMIC_RELEASE);
}

} // namespace uarch
