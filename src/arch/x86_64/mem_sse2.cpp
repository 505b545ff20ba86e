// SSE2 memcpy/memmove/memset ("baseline", the x86-64 floor): overlapping
// blocks chosen by few comparisons for small sizes, everything in the 16
// xmm registers up to 256 bytes (all loads before all stores, so memmove
// needs no direction test there), the 4-vector loops of mem_blocks.h above.
#include <emmintrin.h>
#include "arch/x86_64/mem.h"
#include "arch/x86_64/mem_blocks.h"

namespace uarch {
namespace {

struct Xmm {
	using T = __m128i;
	static constexpr size_t size = 16;
	static UARCH_INLINE T load(const char *p) { return _mm_loadu_si128(reinterpret_cast<const T *>(p)); }
	static UARCH_INLINE void store(char *p, T v) { _mm_storeu_si128(reinterpret_cast<T *>(p), v); }
	static UARCH_INLINE void store_aligned(char *p, T v) { _mm_store_si128(reinterpret_cast<T *>(p), v); }
	static UARCH_INLINE void stream(char *p, T v) { _mm_stream_si128(reinterpret_cast<T *>(p), v); }
	static UARCH_INLINE T splat(uint64_t c8) { return _mm_set1_epi8(char(c8)); }
};

// Size classes: [16,64] on the fall-through path, [4,16) [0,4) (64,128]
// (128,256] and the loops.
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
		copy_head_tail<Xmm, 4>(d, s, n);
	else if (n <= 256)
		copy_head_tail<Xmm, 8>(d, s, n);
	else
		move_large<Xmm>(d, s, n, mem_params);
	return dst;
}

} // namespace
} // namespace uarch

using namespace uarch;

UARCH_MEM_ENTRY void *uarch_x86_64_memmove_sse2(void *d, const void *s, size_t n) { return move(d, s, n); }
// memcpy tolerates overlap: the same entry.
void *uarch_x86_64_memcpy_sse2(void *, const void *, size_t) __attribute__((alias("uarch_x86_64_memmove_sse2")));

UARCH_MEM_ENTRY void *uarch_x86_64_memset_sse2(void *dst, int c, size_t n)
{
	char *d = static_cast<char *>(dst);
	__m128i v = _mm_set1_epi8(char(c));
	if (__builtin_expect(n - 16 <= 64 - 16, 1)) {   // [16,64]
		set_4x_clamped<Xmm>(d, v, n);
		return dst;
	}
	if (n < 16) {
		if (n >= 4)
			set_4x_clamped<B4>(d, uint32_t(splat8(c)), n);
		else if (n)
			set_1_3(d, uint8_t(c), n);
		return dst;
	}
	if (n <= 128)
		set_head_tail<Xmm, 4>(d, v, n);
	else
		set_large<Xmm>(d, uint8_t(c), n, mem_params);
	return dst;
}
