// The bound functions, for code inside the library (the preload names and
// the _chk forms) that must not go through the interposable exported ones.
#pragma once
#include <stddef.h>

namespace uarch {
#define HIDDEN __attribute__((visibility("hidden")))
void *bound_memcpy(void *d, const void *s, size_t n) HIDDEN;
void *bound_memmove(void *d, const void *s, size_t n) HIDDEN;
void *bound_memset(void *d, int c, size_t n) HIDDEN;
#undef HIDDEN
} // namespace uarch

// Binds one exported name to the plan's variant of op:
//   UARCH_IFUNC=1: a GNU ifunc whose resolver builds the state;
//   otherwise:     a function that jumps through a pointer set at load time
//                  by a constructor (and, before that, by its first call).
#if UARCH_IFUNC
#define UARCH_BIND(name, op, ret, params, args)                                          \
	extern "C" {                                                                       \
	typedef ret(*name##_fn) params;                                                    \
	__attribute__((visibility("hidden"))) name##_fn name##_resolver(UARCH_RESOLVER_PARAMS) \
	{                                                                                  \
		const uarch::State &st_ = uarch::state(UARCH_RESOLVER_HWCAP);                \
		return reinterpret_cast<name##_fn>(uarch::impl_fn(op, st_.plan.impl[op]));    \
	}                                                                                  \
	__attribute__((visibility("default"))) ret name params __attribute__((ifunc(#name "_resolver")));                          \
	}
#if defined(__aarch64__)
#define UARCH_RESOLVER_PARAMS uint64_t hwcap, const uint64_t *arg
#define UARCH_RESOLVER_HWCAP hwcap, ((hwcap & (1ull << 62)) && arg) ? arg[2] : 0
#else
#define UARCH_RESOLVER_PARAMS void
#define UARCH_RESOLVER_HWCAP
#endif
#else
#define UARCH_BIND(name, op, ret, params, args)                                          \
	namespace {                                                                        \
	typedef ret(*name##_fn) params;                                                    \
	ret name##_first params;                                                           \
	name##_fn name##_ptr = name##_first;                                               \
	ret name##_first params                                                            \
	{                                                                                  \
		const uarch::State &st_ = uarch::state();                                  \
		name##_fn f = reinterpret_cast<name##_fn>(uarch::impl_fn(op, st_.plan.impl[op])); \
		__atomic_store_n(&name##_ptr, f, __ATOMIC_RELEASE);                         \
		return f args;                                                             \
	}                                                                                  \
	__attribute__((constructor(101))) void name##_bind()                               \
	{                                                                                  \
		const uarch::State &st_ = uarch::state();                                  \
		__atomic_store_n(&name##_ptr,                                              \
				 reinterpret_cast<name##_fn>(uarch::impl_fn(op, st_.plan.impl[op])), \
				 __ATOMIC_RELEASE);                                          \
	}                                                                                  \
	}                                                                                  \
	extern "C" __attribute__((visibility("default"))) ret name params { return __atomic_load_n(&name##_ptr, __ATOMIC_RELAXED) args; }
#endif
