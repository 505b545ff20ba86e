#include "generic/params.h"
#include "generic/prefetch_blocks.h"
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

// Sequentially consistent, both sides: whichever of finish_mem_params and
// set_late_binder comes second sees the other's store, so the binder runs
// at least once (and the binder itself acts once).
static void (*g_late_binder)();

void finish_mem_params()
{
	finish_deferred_plan();
	__atomic_store_n(&mem_params_pending, 0, __ATOMIC_SEQ_CST);
	if (void (*fn)() = __atomic_load_n(&g_late_binder, __ATOMIC_SEQ_CST))
		fn();
}

void set_late_binder(void (*fn)())
{
	__atomic_store_n(&g_late_binder, fn, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&mem_params_pending, __ATOMIC_SEQ_CST))
		fn();
}

} // namespace uarch
