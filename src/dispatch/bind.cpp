// The exported uarch_* entry points, each bound once (bind.h says when).
#include <errno.h>
#include <stdint.h>
#include "dispatch/bind.h"
#include "arch/primitives.h"
#include "dispatch/state.h"
#include "idle/idle.h"
#define UARCH_BUILDING_LIBRARY 1
#include "uarch.h"

// uarch_memcpy, uarch_smp_mb, ...: one per bound op of table/ops.def.
#define UARCH_OP(name, ret, params, args) UARCH_BIND(uarch_##name, uarch::op_##name, ret, params, args)
#include "table/ops.def"

namespace uarch {
#if defined(UARCH_PRELOAD)
// bound_memcpy and the others: preload/entry.cpp, through the entries' offsets.
void bind_api_at_load(const Plan &p)
{
#define UARCH_OP(name, ret, params, args) \
	__atomic_store_n(&uarch_##name##_ptr, reinterpret_cast<uarch_##name##_fn>(impl_fn(op_##name, p.impl[op_##name])), __ATOMIC_RELEASE);
#include "table/ops.def"
}
#elif UARCH_IFUNC
void *bound_memcpy(void *d, const void *s, size_t n) { return ::uarch_memcpy(d, s, n); }
void *bound_memmove(void *d, const void *s, size_t n) { return ::uarch_memmove(d, s, n); }
void *bound_memset(void *d, int c, size_t n) { return ::uarch_memset(d, c, n); }
#else
// Straight through the pointers: one indirect jump, not a jump to the
// exported entry and then its jump.
void *bound_memcpy(void *d, const void *s, size_t n) { return __atomic_load_n(&uarch_memcpy_ptr, __ATOMIC_RELAXED)(d, s, n); }
void *bound_memmove(void *d, const void *s, size_t n) { return __atomic_load_n(&uarch_memmove_ptr, __ATOMIC_RELAXED)(d, s, n); }
void *bound_memset(void *d, int c, size_t n) { return __atomic_load_n(&uarch_memset_ptr, __ATOMIC_RELAXED)(d, c, n); }
#endif
} // namespace uarch

namespace {
// The idle policy of the published state, or of one built now.
inline uarch::IdlePolicy idle_policy()
{
	const uarch::State *s = uarch::state_published();
	return s ? s->plan.idle : uarch::plan_now().idle;
}

// Everything that needs a system call happens here, at load: the CPU, the
// environment, the system profile, the affinity. The ifunc resolvers of a
// library bound at load (or of a static program) came first and built it
// already; then this is a load. Then the cache sizes (after every
// relocation: the C library's record of them may be asked now).
__attribute__((constructor)) void build_state_at_load()
{
	uarch::state_build();
	uarch::complete_plan_at_load();
}
} // namespace

extern "C" {

// The inline forms in uarch.h, as functions for FFI and dlsym callers.
void uarch_smp_rmb(void) { uarch::arch::smp_rmb(); }
void uarch_smp_wmb(void) { uarch::arch::smp_wmb(); }
void uarch_cpu_relax(void) { uarch::arch::cpu_relax(); }
void uarch_prefetch(const void *p) { uarch::arch::prefetch(p); }

int uarch_idle_wait(const uint32_t *addr, uint32_t expected, int64_t timeout_ns)
{
	return uarch::idle_wait(addr, expected, timeout_ns, idle_policy());
}

int uarch_idle_wake(uint32_t *addr, int count)
{
	return uarch::idle_wake(addr, count);
}

// The shared forms: the same policy, a sleeper count in the caller's
// object and a futex keyed by the page (not by the process).
int uarch_idle_wait_shared(uarch_idle_word *w, uint32_t expected, int64_t timeout_ns)
{
	return uarch::idle_wait_shared(w, expected, timeout_ns, idle_policy());
}

int uarch_idle_wake_shared(uarch_idle_word *w, int count)
{
	return uarch::idle_wake_shared(w, count);
}

static bool same(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

const char *uarch_impl(const char *op)
{
	if (!op)
		return nullptr;
	uint32_t i = 0;
	while (i < uarch::op_count && !same(op, uarch::op_name(i)))
		i++;
	if (i == uarch::op_count)
		return nullptr;
	if (const uarch::State *s = uarch::state_published())
		return i == uarch::op_idle_wait ? s->idle_name : uarch::impl_name(s->plan.impl[i]);
	// Racing the load-time build: the plan computed here. Every context
	// writes the same name, byte by byte.
	const uarch::Plan p = uarch::plan_now();
	if (i != uarch::op_idle_wait)
		return uarch::impl_name(p.impl[i]);
	static char name[sizeof uarch::State::idle_name];
	char local[sizeof name];
	uarch::compose_idle_name(p.idle, local);
	for (size_t k = 0; k < sizeof name; k++)
		__atomic_store_n(&name[k], local[k], __ATOMIC_RELAXED);
	return name;
}

const char *uarch_op(unsigned i)
{
	return uarch::op_name(i);
}

} // extern "C"
