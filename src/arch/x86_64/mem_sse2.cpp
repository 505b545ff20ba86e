// SSE2 memcpy/memmove/memset ("baseline", the x86-64 floor): the ladder of
// mem_ladder.h in xmm registers: [16,64] branchless, [4,16) and [1,3]
// below it, (64,128] and (128,256] in registers, the 4-xmm loops above.
#include <emmintrin.h>
#include "arch/x86_64/mem.h"
#include "arch/x86_64/mem_blocks.h"
#include "arch/x86_64/mem_ladder.h"

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

struct Sse2 {
	using Small = Xmm;
	using V = Xmm;
	static constexpr bool masked_small = false;
	static constexpr size_t move_in_registers = 256;   // 16 xmm registers
	static constexpr size_t set_in_registers = 256;
	// The loop stays behind the call: inlining it was not measured here.
	static constexpr bool inline_loop = false;
};

} // namespace
} // namespace uarch

UARCH_X86_LADDER_ENTRIES(sse2, Sse2)
