// The exported functions (dlsym, and the header's UARCH_NO_INLINE mode)
// against the inline ones and the variants by name: nothing that prefetches
// faults on any address; len 0 is accepted anywhere; uarch_prefetchw falls
// back to prefetcht0 where PREFETCHW is missing; the binding names agree.
// (The barriers' behaviour is compared in litmus_test.cpp.)
#include <gtest/gtest.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <functional>
#include <string>
#include <vector>
#include "common/cpuid_dump.h"
#include "dispatch/state.h"
#include "exported.h"
#include "select/plan.h"
#include "tools.h"
#include "uarch.h"
#include "arch_sync.h"
#if defined(__x86_64__)
#include <cpuid.h>
#endif

using sync_test::Exported;

namespace {

constexpr uintptr_t top = ~uintptr_t(0);

const Exported &dl()
{
	const char *why = nullptr;
	const Exported *e = sync_test::exported_dlsym(&why);
	if (!e) {
		ADD_FAILURE() << "dlopen " << UARCH_TEST_LIBUARCH << ": " << why;
		return sync_test::exported_noinline();
	}
	return *e;
}

// A page no access is allowed to (a load there would fault).
const void *prot_none_page()
{
	static void *p = [] {
		void *m = mmap(nullptr, 2 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		return m == MAP_FAILED ? nullptr : m;
	}();
	return p;
}

std::vector<uintptr_t> wild_addresses()
{
	return {
		0, 1, 63,
		uintptr_t(prot_none_page()), uintptr_t(prot_none_page()) + 4095,
		uintptr_t(0x00007ffffffff000),   // the top of user space
		uintptr_t(0x0000800000000000),   // non-canonical
		uintptr_t(0x8000000000000000),   // non-canonical
		uintptr_t(0xffff800000000000),   // kernel
		uintptr_t(0xffffffffff600000),   // vsyscall page
		top - 63, top,
	};
}

struct Range {
	uintptr_t p;
	size_t len;
};

std::vector<Range> wild_ranges()
{
	std::vector<Range> r;
	for (uintptr_t p : wild_addresses())
		for (size_t len : {size_t(0), size_t(1), size_t(64), size_t(4096), size_t(65536)})
			r.push_back({p, len});
	r.push_back({0, 1 << 20});
	r.push_back({uintptr_t(prot_none_page()), 2 * 4096});
	r.push_back({uintptr_t(0xffff800000000000), 1 << 20});
	r.push_back({uintptr_t(0x00007ffffffff000), 0x20000});   // across the canonical hole
	r.push_back({top - 4095, 8192});                         // wraps past the top
	r.push_back({top - 63, ~size_t(0)});                     // wraps by almost 2^64
	r.push_back({top, ~size_t(0)});
	return r;
}

using RangeFn = std::function<void(const void *, size_t)>;

// Runs f over every wild range in a child process, so that a fault names
// the function instead of killing the whole suite.
void expect_no_fault(const std::string &name, const RangeFn &f)
{
	SCOPED_TRACE(name);
	ASSERT_NE(prot_none_page(), nullptr);
	auto ranges = wild_ranges();
	EXPECT_EXIT(
		{
			for (const Range &r : ranges)
				f(reinterpret_cast<const void *>(r.p), r.len);
			fflush(stdout);
			_exit(0);
		},
		::testing::ExitedWithCode(0), "")
		<< name << " faulted";
}

RangeFn single(void (*fn)(const void *))
{
	return [fn](const void *p, size_t) { fn(p); };
}

} // namespace

TEST(Api, InlineNeverFaults)
{
	expect_no_fault("uarch_prefetch (inline)", [](const void *p, size_t) { uarch_prefetch(p); });
	expect_no_fault("uarch_prefetchw (inline)", [](const void *p, size_t) { uarch_prefetchw(p); });
}

TEST(Api, ExportedNeverFaults)
{
	for (const Exported *e : {&dl(), &sync_test::exported_noinline()}) {
		std::string how = std::string(" (") + e->how + ")";
		expect_no_fault("uarch_prefetch" + how, single(e->prefetch));
		expect_no_fault("uarch_prefetchw" + how, single(e->prefetchw));
		expect_no_fault("uarch_prefetch_range" + how, e->prefetch_range);
	}
}

// Every prefetch_range and prefetchw variant this CPU runs, by name; the
// prefetcht0 range variant at every stride the binder can set.
TEST(Api, VariantsNeverFault)
{
	uarch::Cpu cpu;
	uarch::probe_host(&cpu, 0, 0);
	int ran = 0;
	for (uarch::Op op : {uarch::op_prefetch_range, uarch::op_prefetchw}) {
		for (uint32_t i = 1; i < uint32_t(uarch::Impl::count); i++) {
			auto impl = uarch::Impl(i);
			void *fn = uarch::impl_fn(op, impl);
			if (!fn)
				continue;
			std::string name = std::string(uarch::op_name(op)) + " variant " + uarch::impl_name(impl);
			if (!uarch::impl_runs_on(op, impl, cpu)) {
				printf("[ skipped  ] %s: this CPU cannot run it\n", name.c_str());
				continue;
			}
			if (op == uarch::op_prefetchw)
				expect_no_fault(name, single(reinterpret_cast<void (*)(const void *)>(fn)));
			else
				expect_no_fault(name, reinterpret_cast<void (*)(const void *, size_t)>(fn));
			ran++;
		}
	}
#if SYNC_TEST_HAVE_ARCH
	uint32_t saved = uarch::prefetch_stride_shift();
	for (uint32_t s = 16; s <= 4096; s *= 2) {
		uarch::set_prefetch_stride(s);
		expect_no_fault(std::string(SYNC_TEST_RANGE_NAME) + ", stride " + std::to_string(s),
				SYNC_TEST_RANGE_VARIANT);
	}
	uarch::set_prefetch_stride(1u << saved);
#endif
	printf("[ variants ] %d prefetch variants ran\n", ran);
	EXPECT_GE(ran, 2);
}

// Both ways of reaching the library see the same binding, and it is the
// one the policy picks for this CPU.
TEST(Api, BindingNames)
{
	const Exported &a = dl(), &b = sync_test::exported_noinline();
	uarch::Cpu cpu;
	uarch::probe_host(&cpu, 0, 0);
	uarch::Tunables t;
	uarch::parse_tunables(nullptr, 0, &t);
	uarch::Plan plan;
	uarch::select_plan(cpu, t, &plan);
	if (getenv("UARCH_TUNABLES"))
		GTEST_SKIP() << "binding names: UARCH_TUNABLES is set";
	for (const char *op : {"smp_mb", "prefetch_range", "prefetchw"}) {
		ASSERT_NE(a.impl(op), nullptr) << op;
		EXPECT_STREQ(a.impl(op), b.impl(op)) << op;
		uarch::Op o;
		ASSERT_TRUE(uarch::op_from_name(op, strlen(op), &o));
		EXPECT_STREQ(a.impl(op), uarch::impl_name(plan.impl[o])) << op;
	}
#if defined(__x86_64__)
	EXPECT_STREQ(a.impl("smp_mb"), "lock_add");
	EXPECT_STREQ(a.impl("prefetch_range"), "prefetcht0");
	// CPUID 0x80000001 ECX bit 8, read here without the probe.
	unsigned eax, ebx, ecx = 0, edx;
	bool has = __get_cpuid(0x80000001, &eax, &ebx, &ecx, &edx) && (ecx >> 8 & 1);
	EXPECT_STREQ(a.impl("prefetchw"), has ? "prefetchw" : "prefetcht0");
#endif
}

// The policy: prefetchw on a CPU with PREFETCHW, prefetcht0 on one
// without, for every CPUID dump; never a variant the CPU cannot run.
TEST(Api, PrefetchwFallbackPolicy)
{
	DIR *d = opendir(uarch::test::testdata("cpuid").c_str());
	ASSERT_NE(d, nullptr) << uarch::test::testdata("cpuid");
	int with = 0, without = 0;
	uarch::Tunables t;
	uarch::parse_tunables(nullptr, 0, &t);
	while (dirent *e = readdir(d)) {
		std::string f = e->d_name;
		if (f.size() < 4 || f.substr(f.size() - 4) != ".txt")
			continue;
		uarch::Cpu cpu = uarch::test::probe_dump(f);
		uarch::Plan plan;
		uarch::select_plan(cpu, t, &plan);
		bool has = cpu.has(uarch::f_prefetchw);
		(has ? with : without)++;
		EXPECT_EQ(plan.impl[uarch::op_prefetchw], has ? uarch::Impl::prefetchw : uarch::Impl::prefetcht0) << f;
		EXPECT_EQ(uarch::impl_runs_on(uarch::op_prefetchw, uarch::Impl::prefetchw, cpu), has) << f;
		EXPECT_TRUE(uarch::impl_runs_on(uarch::op_prefetchw, uarch::Impl::prefetcht0, cpu)) << f;
	}
	closedir(d);
	printf("[ dumps    ] %d with PREFETCHW, %d without\n", with, without);
	EXPECT_GT(with, 0);
	EXPECT_GT(without, 0);
}

// End to end: with PREFETCHW masked off, the library binds the fallback.
TEST(Api, PrefetchwFallbackBinding)
{
#if !defined(__x86_64__)
	GTEST_SKIP() << "prefetchw fallback binding: PREFETCHW is x86-64's";
#endif
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	ASSERT_GT(n, 0);
	self[n] = 0;
	std::string out;
	int rc = sync_test::run("env UARCH_TUNABLES=mask=-prefetchw " + sync_test::quote(self) +
				" --child-impl prefetchw",
				&out);
	ASSERT_EQ(rc, 0) << out;
	EXPECT_EQ(out, "prefetcht0\n");
}

// The exported barrier's slot is inside its own red zone, which valgrind's
// memcheck accepts; the inline form's slot is below the caller's red zone,
// which memcheck reports (the header documents the flag that silences it).
// The second run shows that this test can see a report.
TEST(Valgrind, ExportedBarrierIsClean)
{
#if !defined(__x86_64__)
	GTEST_SKIP() << "valgrind: the x86-64 barrier slots";
#else
	if (std::string(UARCH_TEST_VALGRIND).empty())
		GTEST_SKIP() << "valgrind: not installed";
	if (UARCH_TEST_SANITIZED)
		GTEST_SKIP() << "valgrind: this build uses a sanitizer";
	std::string vg = sync_test::quote(UARCH_TEST_VALGRIND) + " -q --error-exitcode=99 ";
	std::string out;
	int rc = sync_test::run(vg + sync_test::quote(UARCH_TEST_VG_EXPORTED), &out);
	EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << out;
	rc = sync_test::run(vg + sync_test::quote(UARCH_TEST_VG_INLINE), &out);
	EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 99) << out;
	EXPECT_NE(out.find("below stack pointer"), std::string::npos) << out;
#endif
}

// --child-impl OP: print what the library bound OP to (for the test above).
int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--child-impl")) {
		const char *s = sync_test::exported_noinline().impl(argv[2]);
		printf("%s\n", s ? s : "(null)");
		return 0;
	}
	testing::InitGoogleTest(&argc, argv);
	return RUN_ALL_TESTS();
}
