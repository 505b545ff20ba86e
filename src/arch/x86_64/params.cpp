#include "generic/params.h"
#include "generic/prefetch_blocks.h"
#include "arch/x86_64/mem.h"
#include "sys/load_data.h"

namespace uarch {

MemParams mem_params UARCH_LOAD_DATA;

// Each field is stored on its own (relaxed): a variant that reads them
// while they change sees a mix of old and new windows, and every mix
// copies correctly; the windows only choose among correct strategies.
//
// The plan's "never" (a window with no sizes, an nt_min of 0) becomes a
// start no size reaches, so that the variants' first compare fails: a
// window [0, 0) passed "n >= 0" and then took a second, taken branch on
// every call (Zen 4 guest, fills of 513-1024 bytes).
MemParams arch_params_for(const MemThresholds &m)
{
	const uint64_t never = ~uint64_t(0);
	bool movsb = m.movsb_min && m.movsb_min < m.movsb_max;
	bool stosb = m.stosb_min && m.stosb_min < m.stosb_max;
	MemParams p{movsb ? m.movsb_min : never, movsb ? m.movsb_max : never,
		    stosb ? m.stosb_min : never, stosb ? m.stosb_max : never,
		    m.nt_min ? m.nt_min : never, m.nt_fill_min ? m.nt_fill_min : never, 0, 0};
	p.copy_loop_max = p.movsb_min < p.nt_min ? p.movsb_min : p.nt_min;
	p.set_loop_max = p.stosb_min < p.nt_min ? p.stosb_min : p.nt_min;
	if (p.nt_fill_min < p.set_loop_max)
		p.set_loop_max = p.nt_fill_min;
	return p;
}

void set_arch_params(const Plan &p)
{
	MemParams m = arch_params_for(p.mem);
	__atomic_store_n(&mem_params.movsb_min, m.movsb_min, __ATOMIC_RELAXED);
	__atomic_store_n(&mem_params.movsb_max, m.movsb_max, __ATOMIC_RELAXED);
	__atomic_store_n(&mem_params.stosb_min, m.stosb_min, __ATOMIC_RELAXED);
	__atomic_store_n(&mem_params.stosb_max, m.stosb_max, __ATOMIC_RELAXED);
	__atomic_store_n(&mem_params.nt_min, m.nt_min, __ATOMIC_RELAXED);
	__atomic_store_n(&mem_params.nt_fill_min, m.nt_fill_min, __ATOMIC_RELAXED);
	__atomic_store_n(&mem_params.copy_loop_max, m.copy_loop_max, __ATOMIC_RELAXED);
	__atomic_store_n(&mem_params.set_loop_max, m.set_loop_max, __ATOMIC_RELAXED);
	set_prefetch_stride(p.mem.prefetch_stride);
}

} // namespace uarch
