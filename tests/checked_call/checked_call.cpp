#include "checked_call.h"
#include <mutex>
#include <set>
#if defined(__x86_64__)
#include <cpuid.h>
extern "C" uint32_t uarch_checked_call_flags;
#endif

namespace checked {

namespace {

#if defined(__x86_64__)
const char *const bit_names[] = {"rbx", "rbp", "r12", "r13", "r14", "r15", "direction flag",
				 "stack pointer", "upper YMM state (no vzeroupper)",
				 "upper ZMM0-15 state (no vzeroupper)"};
#elif defined(__aarch64__)
const char *const bit_names[] = {"x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28",
				 "x29", "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15",
				 "stack pointer"};
#endif

bool g_upper, g_upper_unreliable;

#if defined(__x86_64__)
__attribute__((target("avx"), noinline)) void dirty_upper()
{
	__asm__ __volatile__("vxorps %%ymm1, %%ymm1, %%ymm1\n\tvcmpeqps %%ymm1, %%ymm1, %%ymm1" ::: "xmm1");
}

__attribute__((noinline)) uintptr_t no_vectors(uintptr_t a, uintptr_t, uintptr_t, uintptr_t)
{
	__asm__ __volatile__("" ::: "memory");
	return a;
}
#endif

void setup()
{
#if defined(__x86_64__)
	unsigned a, b, c, d;
	uint32_t flags = 0;
	if (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_OSXSAVE) && (c & bit_AVX)) {
		uint32_t lo, hi;
		__asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
		if ((lo & 6) == 6)   // the OS saves SSE and AVX state
			flags |= 1;
		if (__get_cpuid_count(0xd, 1, &a, &b, &c, &d) && (a & 4))
			flags |= 2;
	}
	uarch_checked_call_flags = flags;
	g_upper = flags & 2;
	// The check must be able to pass: dirty the upper state, then call a
	// function that writes no vector register. If XINUSE still reads
	// dirty after the trampoline's vzeroupper, it is not tracked here
	// (qemu-user's TCG reports it so), and the upper-state check is off,
	// said by name in coverage().
	if (g_upper) {
		dirty_upper();
		uint32_t clobbered = 0;
		uarch_checked_call(reinterpret_cast<const void *>(&no_vectors), &clobbered, 0, 0, 0, 0);
		if (clobbered & (3u << 8)) {
			g_upper = false;
			g_upper_unreliable = true;
			uarch_checked_call_flags = flags & ~2u;
		}
	}
#endif
}

} // namespace

void init()
{
	static std::once_flag once;
	std::call_once(once, setup);
}

bool checks_upper_state()
{
	init();
	return g_upper;
}

std::string coverage()
{
	init();
#if defined(__x86_64__)
	return std::string("callee-saved registers, direction flag, stack pointer") +
	       (g_upper ? ", upper YMM/ZMM state (XINUSE)"
		: g_upper_unreliable ? "; XINUSE reads dirty after a call that writes no vector register "
				       "(an emulator): upper state not checked"
				     : "; no XGETBV1: upper state not checked");
#else
	return "callee-saved registers, stack pointer";
#endif
}

std::string describe(uint32_t clobbered)
{
	std::string out;
	for (size_t i = 0; i < sizeof bit_names / sizeof bit_names[0]; i++)
		if (clobbered >> i & 1)
			out += std::string(out.empty() ? "" : ", ") + bit_names[i];
	return out.empty() ? "nothing" : out;
}

} // namespace checked

namespace checked {

void report(const char *variant, const char *op, size_t size, uint32_t clobbered)
{
	static std::mutex lock;
	static std::set<std::string> seen;
	const testing::TestInfo *t = testing::UnitTest::GetInstance()->current_test_info();
	std::string key = std::string(t ? t->test_suite_name() : "") + "." + (t ? t->name() : "") + " " +
			  variant + " " + op + " " + std::to_string(clobbered);
	{
		std::lock_guard<std::mutex> g(lock);
		if (!seen.insert(key).second)
			return;
	}
	ADD_FAILURE() << variant << " " << op << " n=" << size << ": clobbered " << describe(clobbered)
		      << " (first of this kind in this test)";
}

} // namespace checked
