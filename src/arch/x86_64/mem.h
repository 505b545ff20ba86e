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
	// Non-temporal stores for non-overlapping copies and zero fills of at
	// least nt_min bytes, for fills of any other byte from nt_fill_min
	// (never: ~0).
	uint64_t nt_min, nt_fill_min;
	// Derived from the above: the ladder keeps its copy and fill loops
	// inline below these, the first size any window takes (forward copies:
	// rep movsb or streaming; fills: rep stosb or streaming of any byte),
	// so that its hot path makes one compare, not two or three.
	uint64_t copy_loop_max, set_loop_max;
};

// The plan's windows as the variants read them (params.cpp).
MemParams arch_params_for(const MemThresholds &m) __attribute__((visibility("hidden")));

// The binder writes it before publishing any function pointer.
extern MemParams mem_params __attribute__((visibility("hidden")));

} // namespace uarch

// Entry points start a 1 KiB block: the small-size path then sits in one
// fetch block, and a variant of up to 1 KiB (each is) lies within one
// 4 KiB page, so its timing does not depend on where the linker happened
// to place it. A branch taken into the next page costs about a cycle: on
// the Zen 4 guest (family 0x19 model 0x11) the avx512 copy, 64-byte
// aligned, started 64 bytes before a page end in libuarch_preload.so and
// its small paths jumped across; fixed copies of 1-33 and 255-256 bytes
// took 2.73 ns there against 2.46 ns for the same bytes in libuarch.so,
// whose copy lay inside one page (uarch-bench mem --preload --min, 15
// repetitions; sizes 64-128, which stay in the first block, and every
// fill were level). The hygiene check holds every variant to one page.
#define UARCH_MEM_ENTRY __attribute__((aligned(1024)))

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
