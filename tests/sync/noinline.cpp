// Built with -DUARCH_NO_INLINE: uarch.h declares the barrier and prefetch
// functions, and these are the library's (through the PLT).
#ifndef UARCH_NO_INLINE
#error "noinline.cpp must be compiled with -DUARCH_NO_INLINE"
#endif
#include "uarch.h"
#include "exported.h"

namespace sync_test {

const Exported &exported_noinline()
{
	static const Exported e = {
		"UARCH_NO_INLINE", uarch_smp_mb, uarch_smp_rmb, uarch_smp_wmb, uarch_cpu_relax,
		uarch_prefetch, uarch_prefetchw, uarch_prefetch_range, uarch_impl,
	};
	return e;
}

} // namespace sync_test
