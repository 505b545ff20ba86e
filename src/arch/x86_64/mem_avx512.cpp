// AVX-512 (F+BW+VL, BMI2) memcpy/memmove/memset: the ladder of
// mem_ladder.h with its one deliberate difference at the bottom: n < 64
// (fills: n <= 64) is a single branchless class (two byte-masked ymm
// moves, the mask from bzhi: masked-off bytes are neither read nor
// written and cannot fault, so n == 0 touches nothing), but for fills
// whose 64 bytes would cross a page (near_page_end_64). ymm there keeps
// the small sizes off the 512-bit frequency license; one masked zmm move
// is no faster than two masked ymm ones, and slower where it splits a
// cache line (docs/measurements/policy-evidence.md#avx512-masked-small).
// zmm above: [64,512] in registers (8 zmm loads before the stores), 4-zmm
// loops above; fills store head and tail as each class goes (set_nested,
// mem_ladder.h).
#include <immintrin.h>
#include "arch/x86_64/mem.h"
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512vl,bmi2"))), apply_to = function)
#else
#pragma GCC target("avx512f,avx512bw,avx512vl,bmi2")
#endif
#include "arch/x86_64/mem_blocks.h"
#include "arch/x86_64/mem_ladder.h"

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

// Fills below 64 bytes where the masked class would cross a page.
struct Xmm {
	using T = __m128i;
	static constexpr size_t size = 16;
	static UARCH_INLINE T load(const char *p) { return _mm_loadu_si128(reinterpret_cast<const T *>(p)); }
	static UARCH_INLINE void store(char *p, T v) { _mm_storeu_si128(reinterpret_cast<T *>(p), v); }
};

// Whether [p, p + 64) crosses a page boundary: the masked class's two ymm
// then touch the next page, and a masked store that does takes a
// microcode assist whether or not its bytes there are masked off (a load
// only where that page is not mapped), about 100x a fill inside a page
// where the next page is PROT_NONE. glibc's memset makes the same check,
// so fills keep its robustness at a small cost below 64 bytes
// (docs/measurements/policy-evidence.md#avx512-page-end). Copies do not check (see
// copy_masked_64). Two masked zmm stores to whole lines need no test, but
// cost fixed fills to an aligned dst a cycle a call (README, Measured:
// "a small fill without the page test").
UARCH_INLINE bool near_page_end_64(const void *p)
{
	return (uintptr_t(p) & 4095) > 4096 - 64;
}

struct Avx512 {
	using V = Zmm;
	static constexpr bool masked_small = true;
	// 512, not 1024: the 16-zmm class stores every vector unaligned, and
	// split stores make copies to a misaligned dst slower than the loop,
	// which aligns dst. Nor a class of fixed cost with aligned stores
	// between two unaligned ends (17 zmm stores for any size in
	// (512, 1024]): fixed sizes pay its 17 stores where the loop makes
	// 8-16, and real programs' sizes there are a few repeated ones
	// (tests/data/profiles) (docs/measurements/policy-evidence.md#avx512-registers).
	static constexpr size_t move_in_registers = 512;
	static constexpr size_t set_in_registers = 512;
	// The 4-zmm copy loop inline: it once made gcc realign the stack for
	// every size above 64 (a 64-byte-aligned frame for zmm spills), but
	// since the loop keeps one head vector (copy_fwd_loop) neither gcc 12
	// nor clang 14 gives memcpy_avx512 a frame at all (objdump). Inline,
	// copies just above the register classes are faster and none slower
	// (docs/measurements/policy-evidence.md#avx512-inline-loop).
	static constexpr bool inline_loop = true;

	// n < 64: bytes [0, min(n,32)) through the low mask, [32, n) through
	// the high. No page check, unlike the fills: checking dst alone costs
	// every copy below 64 bytes about a cycle, so a copy whose dst window
	// crosses a page pays the assist instead, about 120x where the next
	// page is PROT_NONE (docs/measurements/policy-evidence.md#avx512-copy-page).
	// glibc's memmove uses no masks below 64 bytes.
	static UARCH_INLINE void copy_masked_64(char *d, const char *s, size_t n)
	{
		uint64_t m = _bzhi_u64(~uint64_t(0), uint32_t(n));
		__mmask32 lo = __mmask32(m), hi = __mmask32(m >> 32);
		__m256i a = _mm256_maskz_loadu_epi8(lo, s);
		__m256i b = _mm256_maskz_loadu_epi8(hi, s + 32);
		_mm256_mask_storeu_epi8(d, lo, a);
		_mm256_mask_storeu_epi8(d + 32, hi, b);
	}
	// n <= 64 (bzhi keeps all 64 bits for n == 64).
	static UARCH_INLINE void set_masked_64(char *d, uint8_t c, size_t n)
	{
		if (__builtin_expect(near_page_end_64(d), 0)) {
			if (n >= 16)
				set_4x_clamped<Xmm>(d, _mm_set1_epi8(char(c)), n);
			else
				set_0_15(d, c, n);
			return;
		}
		uint64_t m = _bzhi_u64(~uint64_t(0), uint32_t(n));
		__m256i v = _mm256_set1_epi8(char(c));
		_mm256_mask_storeu_epi8(d, __mmask32(m), v);
		_mm256_mask_storeu_epi8(d + 32, __mmask32(m >> 32), v);
	}
};

} // namespace
} // namespace uarch

UARCH_X86_LADDER_ENTRIES(avx512, Avx512)

#if defined(__clang__)
#pragma clang attribute pop
#endif
