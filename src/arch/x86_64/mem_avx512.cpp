// AVX-512 (F+BW+VL, BMI2) memcpy/memmove/memset: the ladder of
// mem_ladder.h with its one deliberate difference at the bottom: n < 64
// (fills: n <= 64) is a single branchless class (two byte-masked ymm
// moves, the mask from bzhi: masked-off bytes are neither read nor
// written and cannot fault, so n == 0 touches nothing), but for fills
// whose 64 bytes would cross a page (near_page_end_64). ymm there keeps
// the small sizes off the 512-bit frequency license; and one masked zmm
// move was no faster than two masked ymm ones, and much slower where it
// splits a cache line (Sapphire Rapids guest: 2.7-3.4 ns against 1.5;
// Zen 4 guest, fills: level in the memset replays of uarch-bench mem).
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
// only where that page is not mapped). Zen 4 guest (family 0x19 model
// 0x11), TSC ticks per call of 8 and 31 bytes ending at a page's end,
// median of 11 x 10^4 calls: fills 25-27 with the next page mapped,
// 760-780 with it PROT_NONE (a guard page), against 6-7 inside a page;
// copies the same by their dst, and 1100-1180 by a src before a PROT_NONE
// page. glibc's memset makes the same check, so fills keep its
// robustness: there they take 7 ticks, at a cost of about 4% below 64
// bytes (uarch-bench mem, four runs each side: fixed sizes geomean
// 1.04-1.08x glibc -> 0.97-1.03x; pageend1-63 1.76-2.16x). Copies do not
// check (see copy_masked_64). Two masked zmm stores to whole lines need
// no test, but cost fixed fills to an aligned dst a cycle a call (README,
// Measured: "a small fill without the page test").
UARCH_INLINE bool near_page_end_64(const void *p)
{
	return (uintptr_t(p) & 4095) > 4096 - 64;
}

struct Avx512 {
	using V = Zmm;
	static constexpr bool masked_small = true;
	// 512, not 1024: the 16-zmm class stores every vector unaligned, and
	// split stores made fixed copies of 600-1024 bytes to a misaligned
	// dst 0.63-0.85x glibc's (whose loop aligns dst), against 0.93-1.06x
	// through the loop; random sizes 0-1024 lose 1-2% by it (Sapphire
	// Rapids guest, back-to-back calls). Nor a class of fixed cost with
	// aligned stores between two unaligned ends (17 zmm stores for any
	// size in (512, 1024], tried on the Zen 4 guest): it took random
	// sizes 0-1024 from 0.84x glibc's to 0.98x for memset, but fixed
	// sizes pay its 17 stores where the loop makes 8-16 (TSC ticks per
	// call, same buffers, no 4 KiB aliasing: fill 520-700 bytes 25.3
	// against 18.3; copy 520 bytes 25.3 against 14.1), and real
	// programs' sizes there are a few repeated ones (1024, 944, 672;
	// tests/data/profiles).
	static constexpr size_t move_in_registers = 512;
	static constexpr size_t set_in_registers = 512;
	// The 4-zmm copy loop inline: it once made gcc realign the stack for
	// every size above 64 (a 64-byte-aligned frame for zmm spills), but
	// since the loop keeps one head vector (copy_fwd_loop) neither gcc 12
	// nor clang 14 gives memcpy_avx512 a frame at all (objdump). Against
	// the loop behind the call, TSC ticks per call, medians of 61 trials,
	// both load orders, twice, Zen 5 guest: copies of 513-520 B 6-20%
	// faster, 600-1024 B 2-12%, 1.5-2 KiB 0-4%, 4-8 KiB level;
	// uarch-bench mem (three runs each) within its noise, the zstd memmove
	// replay (a quarter of its calls 1024 B) 1.08x.
	static constexpr bool inline_loop = true;

	// n < 64: bytes [0, min(n,32)) through the low mask, [32, n) through
	// the high. No page check, unlike the fills: checking dst alone cost
	// every copy below 64 bytes about a cycle, in uarch-bench mem (four
	// runs each side) fixed sizes below 64 B from 1.08-1.17x glibc to
	// 0.96-1.05x, the uniform and fleet mixes from 1.70-1.83x to
	// 1.60-1.69x, the replays' geomean from 1.87-1.97x to 1.72-1.81x. So
	// a copy whose dst window crosses a page pays the assist: pageend1-63
	// (dst ending at a page's end) 0.14-0.79x glibc there against
	// 1.63-1.70x with the check; about 120x where the next page is
	// PROT_NONE. glibc's memmove uses no masks below 64 bytes. Again with
	// paired rounds (uarch-bench at 18c4433, two runs each side, memcpy
	// and memmove): fixed sizes below 64 B 1.10-1.12x -> 0.96-0.97x, the
	// uniform mixes 2.05-2.06x -> 1.87-1.88x, the copy replays 1.62-1.66x
	// -> 1.52-1.53x, pageend1-63 0.76-0.77x -> 1.56x.
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

using namespace uarch;

UARCH_MEM_ENTRY void *uarch_x86_64_memmove_avx512(void *d, const void *s, size_t n)
{
	return ladder_move<Avx512>(static_cast<char *>(d), static_cast<const char *>(s), n);
}
// memcpy tolerates overlap: the same entry.
void *uarch_x86_64_memcpy_avx512(void *, const void *, size_t) __attribute__((alias("uarch_x86_64_memmove_avx512")));

UARCH_MEM_ENTRY void *uarch_x86_64_memset_avx512(void *d, int c, size_t n)
{
	return ladder_set<Avx512>(static_cast<char *>(d), c, n);
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
