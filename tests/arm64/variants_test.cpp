// The arm64 variants called by name, at the edges their code has: the
// size-class boundaries of the head/tail code (16, 32, 64, 128), the loop
// entry and exit, every small dst/src misalignment, overlap at every
// distance that matters to a 64- or 128-byte loop in both directions,
// buffers flush against PROT_NONE pages, and the AmpereOne copy around its
// threshold with the threshold and prefetch distance moved. Against byte
// loops. (tests/mem runs the general checkasm-style suite over the same
// variants; this adds what is specific to the arm64 code.) Every call goes
// through the checked-call trampoline: x19-x28, x29, d8-d15 and sp must
// come back unchanged.
//
// One instance per variant: Arm64/VariantTest.<test>/asimd|ampereone|mops,
// Arm64/SetTest.Memset/asimd|mops, AmpereOneTest.Thresholds. A variant this
// CPU cannot run is skipped by name (qemu 7.2 has no FEAT_MOPS, so mops is
// skipped under qemu).
#include <gtest/gtest.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>
#include <string>
#include <vector>
#include "arch/aarch64/mem.h"
#include "checked_call.h"
#include "generic/params.h"
#include "dispatch/state.h"
#include "probe/cpu.h"
#include "select/plan.h"

using namespace uarch;

namespace {

using CopyFn = void *(*)(void *, const void *, size_t);
using SetFn = void *(*)(void *, int, size_t);

struct Variant {
	const char *name;
	Impl impl;
	CopyFn memcpy_fn, memmove_fn;   // memmove_fn may be null (ampereone: memcpy only)
	SetFn memset_fn;                // may be null
	const char *needs;              // what a CPU that cannot run it lacks
};

const Variant variants[] = {
	{"asimd", Impl::baseline, uarch_aarch64_memcpy_asimd, uarch_aarch64_memmove_asimd,
	 uarch_aarch64_memset_asimd, "asimd"},
	{"ampereone", Impl::ampereone, uarch_aarch64_memcpy_ampereone, nullptr, nullptr, "asimd"},
	{"mops", Impl::mops, uarch_aarch64_memcpy_mops, uarch_aarch64_memmove_mops, uarch_aarch64_memset_mops,
	 "mops (HWCAP2_MOPS; qemu-aarch64 7.2 does not implement FEAT_MOPS)"},
};

Cpu host_cpu()
{
	Cpu c;
	probe_host(&c, getauxval(AT_HWCAP), getauxval(AT_HWCAP2));
	return c;
}

// Byte-loop references; volatile keeps the compiler from turning them into
// calls of the C library's functions.
void ref_move(char *d, const char *s, size_t n)
{
	std::vector<char> t(s, s + n);
	volatile char *vd = d;
	for (size_t i = 0; i < n; i++)
		vd[i] = t[i];
}

void ref_set(char *d, int c, size_t n)
{
	volatile char *vd = d;
	for (size_t i = 0; i < n; i++)
		vd[i] = char(c);
}

void fill(char *p, size_t n, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 12345;
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345;
		p[i] = char(x >> 23);
	}
}

// [lo, hi) of read-write pages between two PROT_NONE pages.
struct Guarded {
	char *base, *lo, *hi;
	size_t total;
	explicit Guarded(size_t bytes)
	{
		size_t pg = size_t(sysconf(_SC_PAGESIZE));
		size_t len = (bytes + pg - 1) / pg * pg;
		total = len + 2 * pg;
		base = static_cast<char *>(mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
		if (base == MAP_FAILED)
			abort();
		mprotect(base, pg, PROT_NONE);
		mprotect(base + pg + len, pg, PROT_NONE);
		lo = base + pg;
		hi = lo + len;
	}
	~Guarded() { munmap(base, total); }
	Guarded(const Guarded &) = delete;
	Guarded &operator=(const Guarded &) = delete;
};

// Sets the AmpereOne copy's parameters for one test, restores them after.
struct AmpereParams {
	uarch_aarch64_mem_params_t saved = uarch_aarch64_mem_params;
	AmpereParams(uint64_t min, uint64_t dist)
	{
		uarch_aarch64_mem_params.prefetch_copy_min = min;
		uarch_aarch64_mem_params.prefetch_distance = dist;
	}
	~AmpereParams() { uarch_aarch64_mem_params = saved; }
};

int g_ran, g_skipped;

void PrintTo(const Variant &v, std::ostream *os) { *os << v.name; }

class VariantTest : public testing::TestWithParam<Variant> {
protected:
	void SetUp() override
	{
		const Variant &v = GetParam();
		if (!impl_runs_on(op_memcpy, v.impl, host_cpu())) {
			g_skipped++;
			GTEST_SKIP() << v.name << ": CPU lacks " << v.needs;
		}
		g_ran++;
	}

	// The name a checked call reports.
	virtual const char *variant() const { return GetParam().name; }

	// n bytes from s to d (disjoint), 64 sentinel bytes each side of d where
	// the buffer allows; false after a failure message.
	bool copy_ok(CopyFn fn, const char *what, const Guarded &db, char *d, const char *s, size_t n)
	{
		char *w0 = std::max(db.lo, d - 64), *w1 = std::min(db.hi, d + n + 64);
		memset(w0, 0xa5, size_t(w1 - w0));
		std::vector<char> want(w0, w1);
		ref_move(want.data() + (d - w0), s, n);
		void *r = checked::checked_call(variant(), what, n, fn, d, s, n);
		if (r != d || memcmp(w0, want.data(), size_t(w1 - w0))) {
			size_t at = 0;
			while (at < size_t(w1 - w0) && w0[at] == want[at])
				at++;
			ADD_FAILURE() << what << " n=" << n << " dst%16=" << (uintptr_t(d) & 15) << " src%16="
				      << (uintptr_t(s) & 15) << (r != d ? ": wrong return value" : ": wrong byte at dst")
				      << std::showpos << (long(at) - long(d - w0));
			return false;
		}
		return true;
	}

	bool set_ok(const Guarded &db, char *d, int c, size_t n)
	{
		char *w0 = std::max(db.lo, d - 64), *w1 = std::min(db.hi, d + n + 64);
		memset(w0, 0xa5, size_t(w1 - w0));
		std::vector<char> want(w0, w1);
		ref_set(want.data() + (d - w0), c, n);
		void *r = checked::checked_call(GetParam().name, "memset", n, GetParam().memset_fn, d, c, n);
		if (r != d || memcmp(w0, want.data(), size_t(w1 - w0))) {
			ADD_FAILURE() << "memset c=" << c << " n=" << n << " dst%16=" << (uintptr_t(d) & 15);
			return false;
		}
		return true;
	}

	// Within one buffer: n bytes from offset so to offset dof.
	bool overlap_ok(CopyFn fn, const char *what, std::vector<char> &buf, size_t so, size_t dof, size_t n)
	{
		fill(buf.data(), buf.size(), uint32_t(so * 31 + dof * 7 + n));
		std::vector<char> want(buf);
		ref_move(want.data() + dof, want.data() + so, n);
		void *r = checked::checked_call(variant(), what, n, fn, buf.data() + dof, buf.data() + so, n);
		if (r != buf.data() + dof || buf != want) {
			size_t at = 0;
			while (at < buf.size() && buf[at] == want[at])
				at++;
			ADD_FAILURE() << what << " n=" << n << " dst-src=" << (long(dof) - long(so))
				      << " first wrong byte at dst" << std::showpos << (long(at) - long(dof));
			return false;
		}
		return true;
	}

	std::vector<std::pair<CopyFn, const char *>> copy_fns() const
	{
		const Variant &v = GetParam();
		std::vector<std::pair<CopyFn, const char *>> f = {{v.memcpy_fn, "memcpy"}};
		if (v.memmove_fn)
			f.push_back({v.memmove_fn, "memmove"});
		return f;
	}
};

const int aligns[] = {0, 1, 7, 8, 15};

// Every size through the head/tail classes and the first loop iterations.
TEST_P(VariantTest, SizeClasses)
{
	Guarded sb(8192), db(8192);
	fill(sb.lo, 8192, 1);
	for (auto [fn, what] : copy_fns())
		for (size_t n = 0; n <= 400; n++)
			for (int da : aligns)
				for (int sa : aligns)
					ASSERT_TRUE(copy_ok(fn, what, db, db.lo + 64 + da, sb.lo + 64 + sa, n));
}

// Sources and destinations ending (or starting) at a PROT_NONE page: no
// load or store may leave [s, s + n) or [d, d + n).
TEST_P(VariantTest, GuardPages)
{
	const size_t max = 70000;
	Guarded sb(max), db(max);
	fill(sb.lo, size_t(sb.hi - sb.lo), 2);
	std::vector<size_t> sizes;
	for (size_t n = 0; n <= 300; n++)
		sizes.push_back(n);
	for (size_t n : {383, 384, 385, 4095, 4096, 4097, 4096 + 127, 4096 + 128, 4096 + 129, 65537})
		sizes.push_back(n);
	for (size_t n : sizes)
		for (int mode = 0; mode < 4; mode++) {
			const char *s = mode & 1 ? sb.hi - n : sb.lo;
			char *d = mode & 2 ? db.hi - n : db.lo;
			for (auto [fn, what] : copy_fns())
				ASSERT_TRUE(copy_ok(fn, what, db, d, s, n)) << "guard mode " << mode;
		}
}

// Overlap in both directions at distances around the 16-byte alignment
// step and the 64/128-byte blocks, with sizes that take the loops.
TEST_P(VariantTest, Overlap)
{
	std::vector<char> buf(40000);
	const size_t dists[] = {1, 2, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65,
				127, 128, 129, 255, 256, 1000, 2047, 2048, 2112, 4096};
	const size_t sizes[] = {2, 16, 17, 64, 65, 128, 129, 130, 143, 144, 200, 255, 256, 257,
				500, 1000, 4095, 4096, 4097, 4096 + 200, 9000, 20000};
	for (auto [fn, what] : copy_fns())
		for (size_t k : dists)
			for (size_t n : sizes)
				for (size_t base : {size_t(64), size_t(64 + 5)}) {
					ASSERT_TRUE(overlap_ok(fn, what, buf, base, base + k, n));   // dst above
					ASSERT_TRUE(overlap_ok(fn, what, buf, base + k, base, n));   // dst below
				}
	for (auto [fn, what] : copy_fns())
		for (size_t n : {size_t(1), size_t(100), size_t(5000)}) {   // dst == src
			ASSERT_TRUE(overlap_ok(fn, what, buf, 64, 64, n));
		}
}

std::string variant_name(const testing::TestParamInfo<Variant> &i) { return i.param.name; }
INSTANTIATE_TEST_SUITE_P(Arm64, VariantTest, testing::ValuesIn(variants), variant_name);

// memset: the variants that have one.
class SetTest : public VariantTest {};

TEST_P(SetTest, Memset)
{
	Guarded db(70000);
	for (size_t n = 0; n <= 400; n++)
		for (int a : {0, 1, 7, 8, 15})
			ASSERT_TRUE(set_ok(db, db.lo + 64 + a, n % 3 ? 0x3c : 0, n));
	for (size_t n : {1023, 1024, 1025, 4097, 65537}) {
		ASSERT_TRUE(set_ok(db, db.lo, 0xe1, n));
		ASSERT_TRUE(set_ok(db, db.hi - n, 0xe1, n));
		ASSERT_TRUE(set_ok(db, db.hi - n - 9, 0xe1, n));
	}
	// The stored value is c converted to unsigned char.
	for (int c : {0x1ff, -1, 256, int(0x80000041)})
		for (size_t n : {size_t(3), size_t(9), size_t(40), size_t(129), size_t(3000)})
			ASSERT_TRUE(set_ok(db, db.lo + 64 + 3, c, n));
}

INSTANTIATE_TEST_SUITE_P(Arm64, SetTest, testing::Values(variants[0], variants[2]), variant_name);

// The AmpereOne copy runs on any arm64 CPU (only its speed is AmpereOne's).
class AmpereOneTest : public VariantTest {
protected:
	void SetUp() override { g_ran++; }
	const char *variant() const override { return "ampereone"; }
};

// The AmpereOne copy with its prefetching loop moved to small sizes, so
// every loop trip count and exit is reached; at the seed's 4 KiB; and
// disabled (0). The prefetch distance changes nothing but must not matter.
TEST_F(AmpereOneTest, Thresholds)
{
	const Variant &v = variants[1];
	Guarded sb(80000), db(80000);
	fill(sb.lo, size_t(sb.hi - sb.lo), 3);
	struct { uint64_t min, dist; } cfg[] = {{256, 2048}, {256, 64}, {4096, 2048}, {1000, 100000}, {0, 2048}};
	for (auto c : cfg) {
		AmpereParams p(c.min, c.dist);
		std::vector<size_t> sizes;
		uint64_t m = c.min ? c.min : 4096;
		for (size_t n = m - 2; n <= m + 300; n++)
			sizes.push_back(n);
		for (size_t n : {size_t(8192), size_t(8192 + 127), size_t(65536 + 1), size_t(70000)})
			sizes.push_back(n);
		for (size_t n : sizes)
			for (auto [da, sa] : {std::pair{0, 0}, std::pair{1, 0}, std::pair{0, 9}, std::pair{15, 3}})
				ASSERT_TRUE(copy_ok(v.memcpy_fn, "memcpy", db, db.lo + 64 + da, sb.lo + 64 + sa, n))
					<< "prefetch_copy_min=" << c.min << " prefetch_distance=" << c.dist;
		for (size_t n : {m, m + 1, m + 128, size_t(70000)})   // ending at the guard pages
			ASSERT_TRUE(copy_ok(v.memcpy_fn, "memcpy", db, db.hi - n, sb.hi - n, n));
	}
}


// The binder turns the plan's numbers into the variants' parameters.
TEST(Arm64Params, FromPlan)
{
	uarch_aarch64_mem_params_t saved = uarch_aarch64_mem_params;
	Plan p{};
	p.mem.prefetch_copy_min = 4096;
	p.mem.prefetch_distance = 2048;
	p.mem.prefetch_stride = 64;
	set_arch_params(p);
	EXPECT_EQ(uarch_aarch64_mem_params.prefetch_copy_min, 4096u);
	EXPECT_EQ(uarch_aarch64_mem_params.prefetch_distance, 2048u);
	p.mem.prefetch_copy_min = 10;   // below one block plus the tail: raised
	p.mem.prefetch_distance = 0;    // no distance: the seed's
	set_arch_params(p);
	EXPECT_EQ(uarch_aarch64_mem_params.prefetch_copy_min, 256u);
	EXPECT_EQ(uarch_aarch64_mem_params.prefetch_distance, 2048u);
	p.mem.prefetch_copy_min = 0;    // never
	set_arch_params(p);
	EXPECT_EQ(uarch_aarch64_mem_params.prefetch_copy_min, 0u);
	uarch_aarch64_mem_params = saved;
}

// The seed's numbers, and the MIDR rule, in the policy.
TEST(Arm64Policy, AmpereOnePlan)
{
	Tunables t;
	parse_tunables(nullptr, 0, &t);
	const uint64_t asimd = 1 << 1, cpuid = 1 << 11;
	struct { uint64_t midr; const char *want; } rows[] = {
		{0xc00fac30, "ampereone"}, {0xc01fac40, "ampereone"}, {0xc00fac50, "baseline"},
		{0x414fd0c1, "baseline"}, {0x461f0010, "baseline"}, {0x410fd4f0, "baseline"},
	};
	for (auto r : rows) {
		Cpu c;
		probe_arm(&c, asimd | cpuid, 0, r.midr, 0x8444c004);
		Plan p;
		select_plan(c, t, &p);
		EXPECT_STREQ(impl_name(p.impl[op_memcpy]), r.want) << std::hex << r.midr;
		EXPECT_STREQ(impl_name(p.impl[op_memmove]), "baseline") << std::hex << r.midr;
		EXPECT_EQ(p.mem.prefetch_copy_min, 4096u);
		EXPECT_EQ(p.mem.prefetch_distance, 2048u);
	}
	// MOPS where HWCAP2_MOPS says so; the MIDR rule still wins for memcpy.
	Cpu c;
	probe_arm(&c, asimd | cpuid, 1ull << 43, 0x410fd4f0, 0x8444c004);
	Plan p;
	select_plan(c, t, &p);
	EXPECT_STREQ(impl_name(p.impl[op_memcpy]), "mops");
	EXPECT_STREQ(impl_name(p.impl[op_memset]), "mops");
	// The tunable takes the AmpereOne copy away again.
	Tunables t2;
	const char s[] = "memcpy=baseline";
	parse_tunables(s, sizeof s - 1, &t2);
	probe_arm(&c, asimd | cpuid, 0, 0xc00fac30, 0x8444c004);
	select_plan(c, t2, &p);
	EXPECT_STREQ(impl_name(p.impl[op_memcpy]), "baseline");
}

struct Report : testing::Environment {
	void TearDown() override { printf("arm64 variants: %d test instances ran, %d skipped\n", g_ran, g_skipped); }
};
testing::Environment *const report = testing::AddGlobalTestEnvironment(new Report);

} // namespace
