// The probe in two halves: what binding needs (4 CPUID leaves) and the
// caches (at load, in the constructor; never in a copy). Checked on every
// CPUID dump with a counting source, and in this process: after load no
// copy or fill runs CPUID.
#include <gtest/gtest.h>
#include <dirent.h>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>
#include "common/cpuid_dump.h"
#include "dispatch/state.h"
#include "select/plan.h"
#if defined(__x86_64__)
#include "arch/x86_64/mem.h"
#endif

using namespace uarch;

namespace {

// Counts the CPUID instructions a probe asks of a dump.
struct Counting : CpuidSource {
	const CpuidSource *inner;
	mutable int count = 0;
	explicit Counting(const CpuidSource *s) : inner(s)
	{
		cpuid = [](const CpuidSource *self, uint32_t leaf, uint32_t sub) {
			auto *c = static_cast<const Counting *>(self);
			c->count++;
			return c->inner->cpuid(c->inner, leaf, sub);
		};
		xgetbv0 = [](const CpuidSource *self) {
			auto *c = static_cast<const Counting *>(self);
			return c->inner->xgetbv0(c->inner);
		};
	}
};

std::vector<std::string> dumps()
{
	std::vector<std::string> out;
	DIR *d = opendir(test::testdata("cpuid").c_str());
	if (!d)
		return out;
	while (dirent *e = readdir(d)) {
		std::string n = e->d_name;
		if (n.size() > 4 && n.compare(n.size() - 4, 4, ".txt") == 0)
			out.push_back(n);
	}
	closedir(d);
	return out;
}

} // namespace

TEST(Deferral, BindingNeedsFourCpuidLeaves)
{
	std::vector<std::string> files = dumps();
	ASSERT_GE(files.size(), 19u);
	for (const std::string &f : files) {
		SCOPED_TRACE(f);
		test::CpuidDump dump(test::testdata("cpuid/" + f));
		ASSERT_TRUE(dump.ok);
		Counting counting(&dump);
		Cpu early, full;
		probe_x86_binding(&early, &counting);
		EXPECT_LE(counting.count, 4);
		probe_x86(&full, &dump);
		// The first half misses only leaf 7.1's bits and the caches...
		Cpu late = early;
		probe_x86_caches(&late, &dump);
		EXPECT_EQ(0, std::memcmp(&late, &full, sizeof full));
		const uint64_t late_bits = (1ull << f_fsrs) | (1ull << f_fzlrm) | (1ull << f_fsrc);
		EXPECT_EQ(early.features, full.features & ~late_bits);
		EXPECT_EQ(early.family, full.family);
		EXPECT_EQ(early.model, full.model);
		EXPECT_EQ(early.zen, full.zen);
		EXPECT_EQ(0u, early.cache.l1d | early.cache.l2 | early.cache.l3);
		// ...and the bindings do not depend on them: the same variants and
		// idle policy with and without, so the thresholds alone are late.
		// With the CPUID bits a hypervisor may hide taken away too (the
		// Emerald Rapids guest hid AMX).
		for (const char *mask : {"", "mask=-amx_tile", "mask=-avx512fp16"}) {
			SCOPED_TRACE(mask);
			Tunables t;
			parse_tunables(mask, std::strlen(mask), &t);
			Plan a, b;
			select_plan(early, t, &a);
			select_plan(full, t, &b);
			for (uint32_t op = 0; op < op_count; op++)
				EXPECT_EQ(a.impl[op], b.impl[op]) << op_name(op);
			EXPECT_EQ(0, std::memcmp(&a.idle, &b.idle, sizeof a.idle));
			// Below caches_matter_from the windows decide alike with and
			// without the caches: copies and fills smaller than that never
			// need to ask for them.
			auto in = [](uint64_t n, uint64_t lo, uint64_t hi) { return lo && n >= lo && n < hi; };
			std::vector<uint64_t> sizes = {65, 100, 1000, 2047, 2048, 2111, 2112, 3000, 24575, 24576, 100000};
			for (uint64_t k = 7; (1ull << k) < caches_matter_from; k++)
				for (int64_t d : {-1, 0, 1})
					sizes.push_back((1ull << k) + d);
			sizes.push_back(caches_matter_from - 1);
			for (uint64_t n : sizes) {
				ASSERT_LT(n, caches_matter_from);
				EXPECT_EQ(in(n, a.mem.movsb_min, a.mem.movsb_max), in(n, b.mem.movsb_min, b.mem.movsb_max)) << n;
				EXPECT_EQ(in(n, a.mem.stosb_min, a.mem.stosb_max), in(n, b.mem.stosb_min, b.mem.stosb_max)) << n;
				EXPECT_EQ(a.mem.nt_min && n >= a.mem.nt_min, b.mem.nt_min && n >= b.mem.nt_min) << n;
				EXPECT_EQ(a.mem.nt_fill_min && n >= a.mem.nt_fill_min, b.mem.nt_fill_min && n >= b.mem.nt_fill_min) << n;
			}
		}
		// The cache half asks no leaf binding asked: at most 7.1,
		// 0x80000000 and four cache subleaves.
		Cpu again = early;
		Counting cache_count(&dump);
		probe_x86_caches(&again, &cache_count);
		EXPECT_LE(cache_count.count, 6);
		std::printf("%-45s binding %d CPUID, caches %d\n", f.c_str(), counting.count, cache_count.count);
	}
}

#if defined(__x86_64__)
// The caches are asked at load (the constructor's complete_plan_at_load),
// from the C library's record where it has one: afterwards no copy or
// fill of any size, from any number of threads, runs a CPUID instruction
// (under CPUID faulting one would kill the process; in a guest each is a
// VM exit).
TEST(Deferral, CachesAtLoadNoCpuidInACopy)
{
	const State &st = state();
	complete_plan_at_load();   // what the libraries' constructor does
	EXPECT_NE(0u, st.cpu.cache.l2) << "the constructor left the caches unknown";
	const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE), l1d = sysconf(_SC_LEVEL1_DCACHE_SIZE);
	if (l2 > 0 && l1d > 0) {   // the C library's record, taken as it is
		EXPECT_EQ(uint64_t(l2), st.cpu.cache.l2);
		EXPECT_EQ(uint64_t(l1d), st.cpu.cache.l1d);
	}
	using Copy = void *(*)(void *, const void *, size_t);
	using Set = void *(*)(void *, int, size_t);
	auto copy = reinterpret_cast<Copy>(impl_fn(op_memcpy, st.plan.impl[op_memcpy]));
	auto move = reinterpret_cast<Copy>(impl_fn(op_memmove, st.plan.impl[op_memmove]));
	auto set = reinterpret_cast<Set>(impl_fn(op_memset, st.plan.impl[op_memset]));
	ASSERT_TRUE(copy && move && set);
	const uint32_t before = cpuid_instructions();

	constexpr size_t n = 64 << 20;   // past every window: rep movsb, NT stores
	constexpr int threads = 8;
	std::vector<std::vector<unsigned char>> src(threads), dst(threads);
	for (int t = 0; t < threads; t++) {
		src[t].resize(n);
		dst[t].assign(n, 0);
		for (size_t i = 0; i < n; i += 4096)
			src[t][i] = static_cast<unsigned char>(i * 31 + t);
	}
	std::atomic<int> ready{0};
	std::vector<std::thread> pool;
	for (int t = 0; t < threads; t++)
		pool.emplace_back([&, t] {
			ready++;
			while (ready.load() < threads) {
			}
			// Every size class: 2^k - 1, 2^k, 2^k + 1 up to 64 MiB.
			for (size_t k = 0; (size_t(1) << k) <= n; k++)
				for (size_t m : {(size_t(1) << k) - 1, size_t(1) << k, (size_t(1) << k) + 1}) {
					if (m > n || m == 0)
						continue;
					if (t % 3 == 0)
						copy(dst[t].data(), src[t].data(), m);
					else if (t % 3 == 1)
						move(dst[t].data() + (m < n ? 1 : 0), dst[t].data(), m < n ? m : n - 1);
					else
						set(dst[t].data(), t, m);
				}
		});
	for (auto &th : pool)
		th.join();
	EXPECT_EQ(0, std::memcmp(dst[0].data(), src[0].data(), n));
	EXPECT_EQ(std::vector<unsigned char>(n, 2), dst[2]);
	EXPECT_EQ(before, cpuid_instructions()) << "a copy or fill ran CPUID";

	// The windows are the plan of the completed CPU.
	Plan want;
	select_plan(st.cpu, st.tunables, &want);
	MemParams w = arch_params_for(want.mem);
	EXPECT_EQ(w.movsb_min, mem_params.movsb_min);
	EXPECT_EQ(w.movsb_max, mem_params.movsb_max);
	EXPECT_EQ(w.stosb_min, mem_params.stosb_min);
	EXPECT_EQ(w.nt_min, mem_params.nt_min);
	EXPECT_EQ(w.copy_loop_max, mem_params.copy_loop_max);
}
#endif
