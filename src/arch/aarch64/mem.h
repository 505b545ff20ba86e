// arm64 memcpy/memmove/memset variants. Each is a plain function with the C
// library's signature, written in assembly (mem_*.S); none looks at the CPU.
// The AmpereOne copy's size threshold and prefetch distance come from
// uarch_aarch64_mem_params, filled once by the binder from the selection
// policy before any variant can be called, and read-only afterwards.
#pragma once
#include <stddef.h>
#include <stdint.h>

extern "C" {

// Read by mem_ampereone.S at these offsets: keep the layout.
struct uarch_aarch64_mem_params_t {
	// The prefetching 128-byte loop for forward copies of at least this
	// many bytes (>= 256 once set by the binder; 0: never).
	uint64_t prefetch_copy_min;    // offset 0
	// prfm pldl2keep this many bytes ahead of the source, and again 64
	// bytes further (seed 002: 2048 and 2112).
	uint64_t prefetch_distance;    // offset 8
};
extern uarch_aarch64_mem_params_t uarch_aarch64_mem_params __attribute__((visibility("hidden")));

#define HIDDEN __attribute__((visibility("hidden")))
// "baseline": ASIMD. Overlapping head/tail loads and stores up to 128 bytes,
// a 64-byte ldp/stp q-register loop above, backward when dst lies inside
// the source. memcpy is the same code as memmove (it tolerates overlap).
void *uarch_aarch64_memcpy_asimd(void *d, const void *s, size_t n) HIDDEN;
void *uarch_aarch64_memmove_asimd(void *d, const void *s, size_t n) HIDDEN;
void *uarch_aarch64_memset_asimd(void *d, int c, size_t n) HIDDEN;
// "ampereone": seed 002. Forward copies of at least prefetch_copy_min bytes
// run a 128-byte loop with two prfm pldl2keep ahead of the source; all
// other calls are the ASIMD memmove.
void *uarch_aarch64_memcpy_ampereone(void *d, const void *s, size_t n) HIDDEN;
// "mops": FEAT_MOPS (HWCAP2_MOPS) cpyp/cpym/cpye and setp/setm/sete. The
// cpy* forms (not cpyf*) have memmove semantics, so memcpy tolerates overlap.
void *uarch_aarch64_memcpy_mops(void *d, const void *s, size_t n) HIDDEN;
void *uarch_aarch64_memmove_mops(void *d, const void *s, size_t n) HIDDEN;
void *uarch_aarch64_memset_mops(void *d, int c, size_t n) HIDDEN;
#undef HIDDEN
}
