// The trampoline itself: a well-behaved callee reports nothing, and each
// kind of clobber it promises to see is seen (callees written in naked
// asm, so that the compiler cannot save what they break).
#include <gtest/gtest.h>
#include "checked_call.h"

// Top-level asm rather than naked functions: -fstack-protector-all puts
// its canary code into a naked function too (which then reads a stack slot
// it never set up and crashes in the hardened tree).
#define NAKED(name, body)                                                                     \
	__asm__(".text\n.p2align 4\n.globl " #name "\n.hidden " #name "\n.type " #name ", %function\n" \
		#name ":\n" body "\n.size " #name ", .-" #name "\n");                                 \
	void name();
extern "C" {
#if defined(__x86_64__)
NAKED(cc_fine, "lea (%rdi,%rsi), %rax\n ret")
NAKED(cc_rbx, "xor %ebx, %ebx\n ret")
NAKED(cc_r14, "inc %r14\n ret")
NAKED(cc_df, "std\n ret")
NAKED(cc_ymm, "vpcmpeqb %ymm1, %ymm1, %ymm1\n ret")
NAKED(cc_ymm_clean, "vpcmpeqb %ymm1, %ymm1, %ymm1\n vzeroupper\n ret")
#elif defined(__aarch64__)
NAKED(cc_fine, "add x0, x0, x1\n ret")
NAKED(cc_x19, "mov x19, #0\n ret")
NAKED(cc_x29, "mov x29, sp\n ret")
NAKED(cc_d9, "fmov d9, xzr\n ret")
#endif
}

namespace {

uint32_t clobbers(void (*fn)(), uintptr_t *ret = nullptr)
{
	checked::init();
	uint32_t c = 0;
	uintptr_t r = uarch_checked_call(reinterpret_cast<const void *>(fn), &c, 40, 2, 0, 0);
	if (ret)
		*ret = r;
	return c;
}

} // namespace

TEST(CheckedCall, SeesEachClobber)
{
	uintptr_t r = 0;
	EXPECT_EQ(clobbers(cc_fine, &r), 0u);
	EXPECT_EQ(r, 42u) << "arguments and return value pass through";
#if defined(__x86_64__)
	EXPECT_EQ(checked::describe(clobbers(cc_rbx)), "rbx");
	EXPECT_EQ(checked::describe(clobbers(cc_r14)), "r14");
	EXPECT_EQ(checked::describe(clobbers(cc_df)), "direction flag");
	if (!__builtin_cpu_supports("avx2") || !checked::checks_upper_state())
		GTEST_SKIP() << "no AVX2 or no XGETBV1: the upper-state check is not exercised";
	EXPECT_EQ(clobbers(cc_ymm_clean), 0u);
	EXPECT_EQ(checked::describe(clobbers(cc_ymm)), "upper YMM state (no vzeroupper)");
#elif defined(__aarch64__)
	EXPECT_EQ(checked::describe(clobbers(cc_x19)), "x19");
	EXPECT_EQ(checked::describe(clobbers(cc_x29)), "x29");
	EXPECT_EQ(checked::describe(clobbers(cc_d9)), "d9");
#endif
}
