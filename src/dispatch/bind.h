// The bound functions, for code inside the library (the preload names and
// the _chk forms) that must not go through the interposable exported ones.
#pragma once
#include <stddef.h>

#if defined(UARCH_PRELOAD)
#include <stdint.h>
// The preload library's and the recorder's: through the offsets the
// entries use (preload/entry_<arch>.cpp), which need no relocation, so
// that they too work before ld.so has relocated the library.
extern "C" __attribute__((visibility("hidden"))) int64_t uarch_preload_off[3];
namespace uarch {
inline void *entry_target(unsigned i)
{
	return reinterpret_cast<char *>(&uarch_preload_off[i]) + __atomic_load_n(&uarch_preload_off[i], __ATOMIC_RELAXED);
}
inline void *bound_memcpy(void *d, const void *s, size_t n)
{
	return reinterpret_cast<void *(*)(void *, const void *, size_t)>(entry_target(0))(d, s, n);
}
inline void *bound_memmove(void *d, const void *s, size_t n)
{
	return reinterpret_cast<void *(*)(void *, const void *, size_t)>(entry_target(1))(d, s, n);
}
inline void *bound_memset(void *d, int c, size_t n)
{
	return reinterpret_cast<void *(*)(void *, int, size_t)>(entry_target(2))(d, c, n);
}
} // namespace uarch
#else
namespace uarch {
#define HIDDEN __attribute__((visibility("hidden")))
void *bound_memcpy(void *d, const void *s, size_t n) HIDDEN;
void *bound_memmove(void *d, const void *s, size_t n) HIDDEN;
void *bound_memset(void *d, int c, size_t n) HIDDEN;
#undef HIDDEN
} // namespace uarch
#endif

// Binds one exported name to the plan's variant of op:
//   UARCH_IFUNC=1: a GNU ifunc whose resolver builds the state;
//   UARCH_PRELOAD: a function that jumps through a pointer in RELRO, set
//                  by the load-time binding (bind_api_at_load) while ld.so
//                  relocates the library, read-only afterwards;
//   otherwise:     a function that jumps through a pointer set by its first
//                  call.
#if defined(UARCH_PRELOAD)
namespace uarch {
struct Plan;
// The preload library's and the recorder's: from their load-time binding
// only (preload/entry.cpp), while RELRO is still writable.
void bind_api_at_load(const Plan &p) __attribute__((visibility("hidden")));
}
// Until then (no state could be built: every slot busy), a call computes
// the plan and goes to its variant without storing anything.
#define UARCH_BIND(name, op, ret, params, args)                                          \
	namespace {                                                                        \
	typedef ret(*name##_fn) params;                                                    \
	ret name##_first params                                                            \
	{                                                                                  \
		return reinterpret_cast<name##_fn>(uarch::impl_fn(op, uarch::plan_now().impl[op])) args; \
	}                                                                                  \
	__attribute__((section(".data.rel.ro.uarch_api"))) name##_fn name##_ptr = name##_first; \
	}                                                                                  \
	extern "C" __attribute__((visibility("default"))) ret name params { return __atomic_load_n(&name##_ptr, __ATOMIC_RELAXED) args; }
#elif UARCH_IFUNC
#define UARCH_BIND(name, op, ret, params, args)                                          \
	extern "C" {                                                                       \
	typedef ret(*name##_fn) params;                                                    \
	__attribute__((visibility("hidden"))) name##_fn name##_resolver(UARCH_RESOLVER_PARAMS) \
	{                                                                                  \
		const uarch::Plan p_ = uarch::plan_now(UARCH_RESOLVER_HWCAP, false);          \
		return reinterpret_cast<name##_fn>(uarch::impl_fn(op, p_.impl[op]));          \
	}                                                                                  \
	__attribute__((visibility("default"))) ret name params __attribute__((ifunc(#name "_resolver")));                          \
	}
#if defined(__aarch64__)
#define UARCH_RESOLVER_PARAMS uint64_t hwcap, const uint64_t *arg
#define UARCH_RESOLVER_HWCAP hwcap, ((hwcap & (1ull << 62)) && arg) ? arg[2] : 0
#else
#define UARCH_RESOLVER_PARAMS void
#define UARCH_RESOLVER_HWCAP 0, 0
#endif
#else
// Bound at the first call, from the state built at load (a constructor in
// bind.cpp): a first call makes no system call, and never waits; one that
// races the load-time build computes the plan itself (plan_now).
#define UARCH_BIND(name, op, ret, params, args)                                          \
	namespace {                                                                        \
	typedef ret(*name##_fn) params;                                                    \
	ret name##_first params;                                                           \
	name##_fn name##_ptr = name##_first;                                               \
	ret name##_first params                                                            \
	{                                                                                  \
		void *f_ = uarch::impl_fn(op, uarch::plan_now().impl[op]);                \
		__atomic_store_n(&name##_ptr, reinterpret_cast<name##_fn>(f_), __ATOMIC_RELEASE); \
		return reinterpret_cast<name##_fn>(f_) args;                               \
	}                                                                                  \
	}                                                                                  \
	extern "C" __attribute__((visibility("default"))) ret name params { return __atomic_load_n(&name##_ptr, __ATOMIC_RELAXED) args; }
#endif
