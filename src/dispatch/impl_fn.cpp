// Which function implements a variant of an op on this architecture, from
// the rows of table/ops.def. A chain of comparisons, not a table of
// pointers: a pointer table needs load-time relocations, and resolvers may
// run before those are applied; the address of a hidden function is a
// PC-relative lea.
#include "dispatch/state.h"

// Each variant's function, declared with its op's signature (C linkage,
// hidden). The variant's own source file defines it; declaring it here
// too means a new variant needs no header.
#define UARCH_VARIANT(op, impl, arch, needs, symbol, source) UARCH_DECLARE_##arch(op, symbol)
#define UARCH_DECLARE(op, symbol) \
	extern "C" uarch::op_##op##_fn symbol __attribute__((visibility("hidden")));
#define UARCH_DECLARE_any(op, symbol) UARCH_DECLARE(op, symbol)
#if defined(__x86_64__)
#define UARCH_DECLARE_x86_64(op, symbol) UARCH_DECLARE(op, symbol)
#define UARCH_DECLARE_aarch64(op, symbol)
#elif defined(__aarch64__)
#define UARCH_DECLARE_x86_64(op, symbol)
#define UARCH_DECLARE_aarch64(op, symbol) UARCH_DECLARE(op, symbol)
#else
#define UARCH_DECLARE_x86_64(op, symbol)
#define UARCH_DECLARE_aarch64(op, symbol)
#endif
#include "table/ops.def"

namespace uarch {

void *impl_fn(Op op, Impl impl)
{
#define UARCH_VARIANT(o, i, arch, needs, symbol, source) UARCH_RETURN_##arch(o, i, symbol)
#define UARCH_RETURN(o, i, symbol) \
	if (op == op_##o && impl == Impl::i) \
		return reinterpret_cast<void *>(&symbol);
#define UARCH_RETURN_any(o, i, symbol) UARCH_RETURN(o, i, symbol)
#if defined(__x86_64__)
#define UARCH_RETURN_x86_64(o, i, symbol) UARCH_RETURN(o, i, symbol)
#define UARCH_RETURN_aarch64(o, i, symbol)
#elif defined(__aarch64__)
#define UARCH_RETURN_x86_64(o, i, symbol)
#define UARCH_RETURN_aarch64(o, i, symbol) UARCH_RETURN(o, i, symbol)
#else
#define UARCH_RETURN_x86_64(o, i, symbol)
#define UARCH_RETURN_aarch64(o, i, symbol)
#endif
#include "table/ops.def"
	return nullptr;
}

} // namespace uarch
