// General-register memcpy/memmove/memset (seed 001): unrolled 8-byte moves,
// for CPUs where unaligned SSE is slow and rep movs/stos has a large
// start-up cost. Never rep movsq/stosq; rep movsb/stosb only inside the
// mem_params windows (empty without ERMS). Compiled without vector
// registers (GCC: general-regs-only) so the compiler cannot merge the
// 8-byte moves into SSE ones. The ladder of mem_ladder.h in general
// registers: [8,32] branchless, [4,8) and [1,3] below it, (32,64] in
// registers, the 4 x 8-byte loops above.
#include "arch/x86_64/mem.h"
#if !defined(__clang__)
#pragma GCC target("general-regs-only")
#endif
#include "arch/x86_64/mem_blocks.h"
#include "arch/x86_64/mem_ladder.h"

namespace uarch {
namespace {

struct Gpr {
	using Small = B8;
	using V = B8;
	static constexpr bool masked_small = false;
	// Eight 8-byte values live at once: about what the free general
	// registers hold without spilling.
	static constexpr size_t move_in_registers = 64;
	static constexpr size_t set_in_registers = 64;
	// The loop stays behind the call: inlining it was not measured here.
	static constexpr bool inline_loop = false;
};

} // namespace
} // namespace uarch

UARCH_X86_LADDER_ENTRIES(gpr, Gpr)
