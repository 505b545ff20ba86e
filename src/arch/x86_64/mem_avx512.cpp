// AVX-512 (F+BW+VL, BMI2) memcpy/memmove/memset: n <= 64 without a branch
// on the size (two byte-masked ymm moves, the mask from bzhi: masked-off
// bytes are neither read nor written and cannot fault, so n == 0 touches
// nothing), zmm blocks all in registers up to 1 KiB, 4-zmm loops above.
// ymm for the small sizes keeps them off the 512-bit frequency license.
#include <immintrin.h>
#include "arch/x86_64/mem.h"
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512vl,bmi2"))), apply_to = function)
#else
#pragma GCC target("avx512f,avx512bw,avx512vl,bmi2")
#endif
#include "arch/x86_64/mem_blocks.h"

namespace uarch {
namespace {

struct Zmm {
	using T = __m512i;
	static constexpr size_t size = 64;
	static UARCH_INLINE T load(const char *p) { return _mm512_loadu_si512(p); }
	static UARCH_INLINE void store(char *p, T v) { _mm512_storeu_si512(p, v); }
	static UARCH_INLINE void store_aligned(char *p, T v) { _mm512_store_si512(p, v); }
	static UARCH_INLINE void stream(char *p, T v) { _mm512_stream_si512(reinterpret_cast<T *>(p), v); }
	static UARCH_INLINE T splat(uint64_t c8) { return _mm512_set1_epi8(char(c8)); }
};

// n <= 64: bytes [0, min(n,32)) through the low mask, [32, n) through the high.
UARCH_INLINE void copy_masked_64(char *d, const char *s, size_t n)
{
	uint64_t m = _bzhi_u64(~uint64_t(0), uint32_t(n));
	__mmask32 lo = __mmask32(m), hi = __mmask32(m >> 32);
	__m256i a = _mm256_maskz_loadu_epi8(lo, s);
	__m256i b = _mm256_maskz_loadu_epi8(hi, s + 32);
	_mm256_mask_storeu_epi8(d, lo, a);
	_mm256_mask_storeu_epi8(d + 32, hi, b);
}

UARCH_INLINE void *move(void *dst, const void *src, size_t n)
{
	char *d = static_cast<char *>(dst);
	const char *s = static_cast<const char *>(src);
	if (n <= 64)
		copy_masked_64(d, s, n);
	else if (n <= 128)
		copy_head_tail<Zmm, 1>(d, s, n);
	else if (n <= 256)
		copy_head_tail<Zmm, 2>(d, s, n);
	else if (n <= 512)
		copy_head_tail<Zmm, 4>(d, s, n);
	else if (n <= 1024)
		copy_head_tail<Zmm, 8>(d, s, n);
	else
		move_large<Zmm>(d, s, n, mem_params);
	return dst;
}

} // namespace
} // namespace uarch

using namespace uarch;

UARCH_MEM_ENTRY void *uarch_x86_64_memmove_avx512(void *d, const void *s, size_t n) { return move(d, s, n); }
// memcpy tolerates overlap: the same entry.
void *uarch_x86_64_memcpy_avx512(void *, const void *, size_t) __attribute__((alias("uarch_x86_64_memmove_avx512")));

UARCH_MEM_ENTRY void *uarch_x86_64_memset_avx512(void *dst, int c, size_t n)
{
	char *d = static_cast<char *>(dst);
	if (n <= 64) {
		uint64_t m = _bzhi_u64(~uint64_t(0), uint32_t(n));
		__m256i v = _mm256_set1_epi8(char(c));
		_mm256_mask_storeu_epi8(d, __mmask32(m), v);
		_mm256_mask_storeu_epi8(d + 32, __mmask32(m >> 32), v);
		return dst;
	}
	__m512i v = _mm512_set1_epi8(char(c));
	if (n <= 128)
		set_head_tail<Zmm, 1>(d, v, n);
	else if (n <= 256)
		set_head_tail<Zmm, 2>(d, v, n);
	else if (n <= 512)
		set_head_tail<Zmm, 4>(d, v, n);
	else
		set_large<Zmm>(d, uint8_t(c), n, mem_params);
	return dst;
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
