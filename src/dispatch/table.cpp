// Which function implements a variant of an op on this architecture. A
// switch, not a table of pointers: a pointer table needs load-time
// relocations, and resolvers may run before those are applied.
#include "dispatch/state.h"
#include "generic/generic.h"
#if defined(__x86_64__)
#include "arch/x86_64/mem.h"
#include "arch/x86_64/sync.h"
#elif defined(__aarch64__)
#include "arch/aarch64/mem.h"
#include "arch/aarch64/sync.h"
#endif

namespace uarch {

#define FN(f) reinterpret_cast<void *>(&f)

void *impl_fn(Op op, Impl impl)
{
	switch (op) {
	case op_memcpy:
		switch (impl) {
		case Impl::generic: return FN(uarch_generic_memcpy);
#if defined(__x86_64__)
		case Impl::baseline: return FN(uarch_x86_64_memcpy_sse2);
		case Impl::gpr: return FN(uarch_x86_64_memcpy_gpr);
		case Impl::avx2: return FN(uarch_x86_64_memcpy_avx2);
		case Impl::avx512: return FN(uarch_x86_64_memcpy_avx512);
#elif defined(__aarch64__)
		case Impl::baseline: return FN(uarch_aarch64_memcpy_asimd);
		case Impl::ampereone: return FN(uarch_aarch64_memcpy_ampereone);
		case Impl::mops: return FN(uarch_aarch64_memcpy_mops);
#endif
		default: return nullptr;
		}
	case op_memmove:
		switch (impl) {
		case Impl::generic: return FN(uarch_generic_memmove);
#if defined(__x86_64__)
		case Impl::baseline: return FN(uarch_x86_64_memmove_sse2);
		case Impl::gpr: return FN(uarch_x86_64_memmove_gpr);
		case Impl::avx2: return FN(uarch_x86_64_memmove_avx2);
		case Impl::avx512: return FN(uarch_x86_64_memmove_avx512);
#elif defined(__aarch64__)
		case Impl::baseline: return FN(uarch_aarch64_memmove_asimd);
		case Impl::mops: return FN(uarch_aarch64_memmove_mops);
#endif
		default: return nullptr;
		}
	case op_memset:
		switch (impl) {
		case Impl::generic: return FN(uarch_generic_memset);
#if defined(__x86_64__)
		case Impl::baseline: return FN(uarch_x86_64_memset_sse2);
		case Impl::gpr: return FN(uarch_x86_64_memset_gpr);
		case Impl::avx2: return FN(uarch_x86_64_memset_avx2);
		case Impl::avx512: return FN(uarch_x86_64_memset_avx512);
#elif defined(__aarch64__)
		case Impl::baseline: return FN(uarch_aarch64_memset_asimd);
		case Impl::mops: return FN(uarch_aarch64_memset_mops);
#endif
		default: return nullptr;
		}
	case op_smp_mb:
		switch (impl) {
		case Impl::generic: return FN(uarch_generic_smp_mb);
#if defined(__x86_64__)
		case Impl::lock_add: return FN(uarch_x86_64_smp_mb_lock_add);
		case Impl::mfence: return FN(uarch_x86_64_smp_mb_mfence);
#elif defined(__aarch64__)
		case Impl::dmb: return FN(uarch_aarch64_smp_mb_dmb);
#endif
		default: return nullptr;
		}
	case op_prefetch_range:
		switch (impl) {
		case Impl::generic: return FN(uarch_generic_prefetch_range);
#if defined(__x86_64__)
		case Impl::prefetcht0: return FN(uarch_x86_64_prefetch_range_t0);
#elif defined(__aarch64__)
		case Impl::prfm: return FN(uarch_aarch64_prefetch_range_prfm);
#endif
		default: return nullptr;
		}
	case op_prefetchw:
		switch (impl) {
#if defined(__x86_64__)
		case Impl::prefetchw: return FN(uarch_x86_64_prefetchw_w);
		case Impl::prefetcht0: return FN(uarch_x86_64_prefetchw_t0);
#elif defined(__aarch64__)
		case Impl::prfm: return FN(uarch_aarch64_prefetchw_prfm);
#endif
		default: return nullptr;
		}
	default:
		return nullptr;
	}
}

} // namespace uarch
