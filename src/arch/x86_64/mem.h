// x86-64 memcpy/memmove/memset variants. Each is a plain function with the
// C library's signature; none looks at the CPU: the strategy windows come
// from mem_params, filled once by the binder from the selection policy
// before any variant can be called, and read-only afterwards.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "select/plan.h"

namespace uarch {

struct MemParams {
	// rep movsb is used for memcpy/forward memmove sizes in [movsb_min, movsb_max)
	// (never: both ~0, so the first compare fails).
	uint64_t movsb_min, movsb_max;
	// rep stosb for memset sizes in [stosb_min, stosb_max) (same convention).
	uint64_t stosb_min, stosb_max;
	// Non-temporal stores for non-overlapping copies of at least nt_min bytes
	// (never: ~0).
	uint64_t nt_min;
};

// The plan's windows as the variants read them (params.cpp).
MemParams arch_params_for(const MemThresholds &m) __attribute__((visibility("hidden")));

// The binder writes it before publishing any function pointer.
extern MemParams mem_params __attribute__((visibility("hidden")));

// Nonzero while mem_params holds the windows of binding, made without the
// cache sizes (CPUID leaves that cost a VM exit each in a guest): a copy or
// fill of caches_matter_from bytes or more calls finish_mem_params() first,
// which probes the caches, re-plans and clears it (params.cpp); smaller
// ones decide the same either way (plan.h).
extern int mem_params_pending __attribute__((visibility("hidden")));
void finish_mem_params() __attribute__((visibility("hidden")));

} // namespace uarch

// Entry points start a 64-byte line, as the C library's do: the small-size
// path then sits in one fetch block, and its timing does not depend on
// where the linker happened to place the function.
#define UARCH_MEM_ENTRY __attribute__((aligned(64)))

extern "C" {
#define UARCH_X86_MEM(isa)                                                              \
	void *uarch_x86_64_memcpy_##isa(void *d, const void *s, size_t n)                 \
		__attribute__((visibility("hidden")));                                     \
	void *uarch_x86_64_memmove_##isa(void *d, const void *s, size_t n)                \
		__attribute__((visibility("hidden")));                                     \
	void *uarch_x86_64_memset_##isa(void *d, int c, size_t n)                         \
		__attribute__((visibility("hidden")));
UARCH_X86_MEM(sse2)    // "baseline": the x86-64 floor
UARCH_X86_MEM(gpr)     // "gpr": unrolled general-register moves (seed 001)
UARCH_X86_MEM(avx2)    // "avx2"
UARCH_X86_MEM(avx512)  // "avx512": needs AVX512F+BW+VL and BMI2
#undef UARCH_X86_MEM
}
