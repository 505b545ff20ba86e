// AVX2 memcpy/memmove/memset: the ladder of mem_ladder.h with xmm blocks
// for the small sizes ([16,64] branchless, VEX-128, which leaves the upper
// state clean and needs no vzeroupper) and ymm above: (64,128] and
// (128,256] in registers, the 4-ymm loops above.
#include <immintrin.h>
#include "arch/x86_64/mem.h"
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC target("avx2")
#endif
#include "arch/x86_64/mem_blocks.h"
#include "arch/x86_64/mem_ladder.h"

namespace uarch {
namespace {

struct Xmm {
	using T = __m128i;
	static constexpr size_t size = 16;
	static UARCH_INLINE T load(const char *p) { return _mm_loadu_si128(reinterpret_cast<const T *>(p)); }
	static UARCH_INLINE void store(char *p, T v) { _mm_storeu_si128(reinterpret_cast<T *>(p), v); }
	static UARCH_INLINE T splat(uint64_t c8) { return _mm_set1_epi8(char(c8)); }
};

struct Ymm {
	using T = __m256i;
	static constexpr size_t size = 32;
	static UARCH_INLINE T load(const char *p) { return _mm256_loadu_si256(reinterpret_cast<const T *>(p)); }
	static UARCH_INLINE void store(char *p, T v) { _mm256_storeu_si256(reinterpret_cast<T *>(p), v); }
	static UARCH_INLINE void store_aligned(char *p, T v) { _mm256_store_si256(reinterpret_cast<T *>(p), v); }
	static UARCH_INLINE void stream(char *p, T v) { _mm256_stream_si256(reinterpret_cast<T *>(p), v); }
	static UARCH_INLINE T splat(uint64_t c8) { return _mm256_set1_epi8(char(c8)); }
};

struct Avx2 {
	using Small = Xmm;
	using V = Ymm;
	static constexpr bool masked_small = false;
	static constexpr size_t move_in_registers = 256;   // 8 ymm loads before the stores
	static constexpr size_t set_in_registers = 256;
	// The 4-ymm loop inline below the windows: no call for 257 B..2 KiB.
	static constexpr bool inline_loop = true;
};

} // namespace
} // namespace uarch

UARCH_X86_LADDER_ENTRIES(avx2, Avx2)

#if defined(__clang__)
#pragma clang attribute pop
#endif
