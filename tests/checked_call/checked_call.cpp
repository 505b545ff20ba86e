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

bool g_upper;

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
	       (g_upper ? ", upper YMM/ZMM state (XINUSE)" : "; no XGETBV1: upper state not checked");
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
