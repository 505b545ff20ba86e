// General-register memcpy/memmove/memset (seed 001): unrolled 8-byte moves,
// for CPUs where unaligned SSE is slow and rep movs/stos has a large
// start-up cost. Never rep movsq/stosq; rep movsb/stosb only inside the
// mem_params windows (empty without ERMS). Compiled without vector
// registers (GCC: general-regs-only) so the compiler cannot merge the
// 8-byte moves into SSE ones.
#include "arch/x86_64/mem.h"
#if !defined(__clang__)
#pragma GCC target("general-regs-only")
#endif
#include "arch/x86_64/mem_blocks.h"

namespace uarch {
namespace {

// Size classes: [8,32] on the fall-through path, [4,8) [0,4) (32,64] and
// the 4 x 8-byte loop.
UARCH_INLINE void *move(void *dst, const void *src, size_t n)
{
	char *d = static_cast<char *>(dst);
	const char *s = static_cast<const char *>(src);
	if (__builtin_expect(n - 8 <= 32 - 8, 1)) {
		copy_4x_clamped<B8>(d, s, n);
		return dst;
	}
	if (n < 8) {
		if (n >= 4)
			copy_4x_clamped<B4>(d, s, n);
		else if (n)
			copy_1_3(d, s, n);
		return dst;
	}
	if (n <= 64)
		copy_head_tail<B8, 4>(d, s, n);
	else
		move_large<B8>(d, s, n, mem_params);
	return dst;
}

} // namespace
} // namespace uarch

using namespace uarch;

UARCH_MEM_ENTRY void *uarch_x86_64_memmove_gpr(void *d, const void *s, size_t n) { return move(d, s, n); }
// memcpy tolerates overlap: the same entry.
void *uarch_x86_64_memcpy_gpr(void *, const void *, size_t) __attribute__((alias("uarch_x86_64_memmove_gpr")));

UARCH_MEM_ENTRY void *uarch_x86_64_memset_gpr(void *dst, int c, size_t n)
{
	char *d = static_cast<char *>(dst);
	uint64_t v = splat8(c);
	if (__builtin_expect(n - 8 <= 32 - 8, 1)) {   // [8,32]
		set_4x_clamped<B8>(d, v, n);
		return dst;
	}
	if (n < 8) {
		if (n >= 4)
			set_4x_clamped<B4>(d, uint32_t(v), n);
		else if (n)
			set_1_3(d, uint8_t(c), n);
		return dst;
	}
	if (n <= 64)
		set_head_tail<B8, 4>(d, v, n);
	else
		set_large<B8>(d, uint8_t(c), n, mem_params);
	return dst;
}
