// AVX2 memcpy/memmove/memset: overlapping blocks chosen by few comparisons
// for small sizes, everything in ymm registers up to 512 bytes (all loads
// before all stores, so memmove needs no direction test there), and the
// 4-vector loops of mem_blocks.h above.
#include <immintrin.h>
#include "arch/x86_64/mem.h"
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC target("avx2")
#endif
#include "arch/x86_64/mem_blocks.h"

namespace uarch {
namespace {

struct Xmm {
	using T = __m128i;
	static constexpr size_t size = 16;
	static UARCH_INLINE T load(const char *p) { return _mm_loadu_si128(reinterpret_cast<const T *>(p)); }
	static UARCH_INLINE void store(char *p, T v) { _mm_storeu_si128(reinterpret_cast<T *>(p), v); }
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

// Size classes (each branch is taken for a whole range, so a fixed size
// predicts perfectly and a random size in 0..64 mispredicts about one
// branch in three): [16,64] first, on the fall-through path (a taken
// branch costs about a cycle here), then [4,16) [0,4) (64,128] (128,256]
// (256,512] and the loops.
UARCH_INLINE void *move(void *dst, const void *src, size_t n)
{
	char *d = static_cast<char *>(dst);
	const char *s = static_cast<const char *>(src);
	if (__builtin_expect(n - 16 <= 64 - 16, 1)) {
		copy_4x_clamped<Xmm>(d, s, n);
		return dst;
	}
	if (n < 16) {
		if (n >= 4)
			copy_4x_clamped<B4>(d, s, n);
		else if (n)
			copy_1_3(d, s, n);
		return dst;
	}
	if (n <= 128)
		copy_head_tail<Ymm, 2>(d, s, n);
	else if (n <= 256)
		copy_head_tail<Ymm, 4>(d, s, n);
	else if (uintptr_t(d) - uintptr_t(s) >= n && n < mem_params.movsb_min && n <= mem_params.nt_min - 1)
		copy_fwd_loop<Ymm, false>(d, s, n);   // forward-safe, below every window: no call
	else
		move_large<Ymm>(d, s, n, mem_params);
	return dst;
}

} // namespace
} // namespace uarch

using namespace uarch;

UARCH_MEM_ENTRY void *uarch_x86_64_memmove_avx2(void *d, const void *s, size_t n) { return move(d, s, n); }
// memcpy tolerates overlap: the same entry.
void *uarch_x86_64_memcpy_avx2(void *, const void *, size_t) __attribute__((alias("uarch_x86_64_memmove_avx2")));

UARCH_MEM_ENTRY void *uarch_x86_64_memset_avx2(void *dst, int c, size_t n)
{
	char *d = static_cast<char *>(dst);
	if (__builtin_expect(n - 16 <= 64 - 16, 1)) {   // [16,64]
		set_4x_clamped<Xmm>(d, _mm_set1_epi8(char(c)), n);
		return dst;
	}
	if (n < 16) {
		if (n >= 4)
			set_4x_clamped<B4>(d, uint32_t(splat8(c)), n);
		else if (n)
			set_1_3(d, uint8_t(c), n);
		return dst;
	}
	__m256i v = _mm256_set1_epi8(char(c));
	if (n <= 128)
		set_head_tail<Ymm, 2>(d, v, n);
	else if (n <= 256)
		set_head_tail<Ymm, 4>(d, v, n);
	else if (n < mem_params.stosb_min)
		set_fwd_loop<Ymm>(d, v, n);   // below the rep stosb window: no call
	else
		set_large<Ymm>(d, uint8_t(c), n, mem_params);
	return dst;
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
