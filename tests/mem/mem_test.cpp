// checkasm-style tests of every memcpy/memmove/memset variant this
// architecture has, against the byte loops in ref.cpp. One instance per
// variant (Variants/MemTest.Copy/avx2); variants this CPU cannot run are
// skipped by name with the features it lacks. Every call goes through the
// checked-call trampoline (tests/checked_call): a variant that clobbers a
// callee-saved register or returns with dirty upper vector state fails
// with its name, op and size. "bound" is the exported
// uarch_memcpy/memmove/memset of libuarch.so, whatever it bound to.
#include <gtest/gtest.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>
#include <algorithm>
#include <random>
#include <string>
#include <vector>
#include "generic/params.h"
#include "dispatch/state.h"
#include "probe/cpu.h"
#include "select/plan.h"
#include "uarch.h"
#include "checked_call.h"
#include "ref.h"
#if defined(__x86_64__)
#include "arch/x86_64/mem_blocks.h"
#endif

using namespace uarch;

namespace {

using CopyFn = void *(*)(void *, const void *, size_t);
using SetFn = void *(*)(void *, int, size_t);

struct Variant {
	std::string name;
	Impl impl;          // Impl::none: the exported, bound functions
	CopyFn memcpy_fn, memmove_fn;
	SetFn memset_fn;
};

Cpu host_cpu()
{
	Cpu c;
	probe_host(&c, getauxval(AT_HWCAP), getauxval(AT_HWCAP2));
	return c;
}

Plan host_plan()
{
	Tunables t;
	parse_tunables(nullptr, 0, &t);
	Plan p;
	select_plan(host_cpu(), t, &p);
	return p;
}

std::vector<Variant> all_variants()
{
	std::vector<Variant> v;
	for (uint32_t i = 1; i < uint32_t(Impl::count); i++) {
		Impl impl = Impl(i);
		void *c = impl_fn(op_memcpy, impl), *m = impl_fn(op_memmove, impl), *s = impl_fn(op_memset, impl);
		// A memcpy-only variant (arm64's AmpereOne copy) runs every test
		// with the architecture's baseline memmove and memset beside it.
		if (c && (!m || !s)) {
			m = m ? m : impl_fn(op_memmove, Impl::baseline);
			s = s ? s : impl_fn(op_memset, Impl::baseline);
		}
		if (c && m && s)
			v.push_back({impl_name(impl), impl, reinterpret_cast<CopyFn>(c),
				     reinterpret_cast<CopyFn>(m), reinterpret_cast<SetFn>(s)});
	}
	v.push_back({"bound", Impl::none, uarch_memcpy, uarch_memmove, uarch_memset});
	return v;
}

// Which features this CPU lacks for impl: those without which even an
// otherwise complete CPU could not run it.
std::string missing_features(Impl impl)
{
	Cpu c = host_cpu();
	std::string out;
	for (uint32_t f = 0; f < f_count; f++) {
		if (c.has(Feature(f)))
			continue;
		Cpu all = c;
		all.features = ~uint64_t(0);
		all.clear(Feature(f));
		bool needs = false;
		for (Op op : {op_memcpy, op_memmove, op_memset})
			needs |= !impl_runs_on(op, impl, all);
		if (needs)
			out += std::string(out.empty() ? "" : ", ") + feature_name(f);
	}
	return out.empty() ? "this CPU cannot run it" : "CPU lacks " + out;
}

int g_ran, g_skipped;
std::vector<std::string> g_skipped_names;

// A buffer of whole pages with a PROT_NONE page directly before and after.
struct Guarded {
	char *base = nullptr, *lo = nullptr, *hi = nullptr;
	size_t total = 0;
	explicit Guarded(size_t bytes)
	{
		size_t pg = size_t(sysconf(_SC_PAGESIZE));
		size_t len = (bytes + pg - 1) / pg * pg;
		total = len + 2 * pg;
		void *m = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			abort();
		base = static_cast<char *>(m);
		mprotect(base, pg, PROT_NONE);
		mprotect(base + pg + len, pg, PROT_NONE);
		lo = base + pg;
		hi = lo + len;
	}
	~Guarded() { munmap(base, total); }
	Guarded(const Guarded &) = delete;
	Guarded &operator=(const Guarded &) = delete;
	size_t size() const { return size_t(hi - lo); }
};

constexpr unsigned char sentinel = 0xA5;   // never in a source pattern

// Pseudo-random bytes, none equal to the sentinel: a copy that writes past
// dst always leaves a byte that differs from the sentinel.
void fill_pattern(char *p, size_t n, uint32_t seed)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		memcpy(p + i, &x, 8);
	}
	for (; i < n; i++)
		p[i] = char(x >> (8 * (i & 7)));
	for (i = 0; i < n; i++)
		if (static_cast<unsigned char>(p[i]) == sentinel)
			p[i] = char(sentinel ^ 1);
}

constexpr size_t slack = 128;   // sentinel bytes checked on each side of dst

// The first differing offset of two ranges, or -1.
long first_diff(const char *a, const char *b, size_t n)
{
	if (!memcmp(a, b, n))
		return -1;
	for (size_t i = 0;; i++)
		if (a[i] != b[i])
			return long(i);
}

class MemTest : public testing::TestWithParam<Variant> {
protected:
	void SetUp() override
	{
		const Variant &v = GetParam();
		if (v.impl != Impl::none && !impl_runs_on(op_memcpy, v.impl, host_cpu())) {
			g_skipped++;
			g_skipped_names.push_back(v.name);
			GTEST_SKIP() << v.name << ": " << missing_features(v.impl);
		}
		g_ran++;
	}

	// The variant's functions, through the checked call.
	static void *copy(CopyFn fn, const char *what, void *d, const void *s, size_t n)
	{
		return checked::checked_call(GetParam().name.c_str(), what, n, fn, d, s, n);
	}
	static void *set(void *d, int c, size_t n)
	{
		return checked::checked_call(GetParam().name.c_str(), "memset", n, GetParam().memset_fn, d, c, n);
	}

	// One copy of n bytes from s to d (disjoint, inside their buffers with
	// their guards), with sentinels around d where the buffer has room. For
	// disjoint buffers the byte loop's result is src itself, so dst is
	// compared with src directly. Returns false (after a failure message)
	// on a wrong result.
	bool check_copy(CopyFn fn, const char *what, const Guarded &db, char *d, const char *s, size_t n)
	{
		char *w0 = std::max(db.lo, d - slack), *w1 = std::min(db.hi, d + n + slack);
		memset(w0, sentinel, size_t(w1 - w0));
		void *r = copy(fn, what, d, s, n);
		if (r != d) {
			ADD_FAILURE() << what << " n=" << n << ": returned " << r << ", not dst " << (void *)d;
			return false;
		}
		long at = first_diff(d, s, n);
		if (at < 0)
			at = sentinel_diff(w0, d, d + n, w1);
		if (at != -1) {
			ADD_FAILURE() << what << " n=" << n << " dst%64=" << (uintptr_t(d) & 63)
				      << " src%64=" << (uintptr_t(s) & 63) << ": byte " << at
				      << " relative to dst is wrong";
			return false;
		}
		return true;
	}

	// The offset relative to d of the first byte in [w0, d) or [e, w1)
	// that is not the sentinel, or -1.
	static long sentinel_diff(const char *w0, const char *d, const char *e, const char *w1)
	{
		static const std::vector<char> ok(slack, char(sentinel));
		long at = first_diff(w0, ok.data(), size_t(d - w0));
		if (at >= 0)
			return at - long(d - w0);
		at = first_diff(e, ok.data(), size_t(w1 - e));
		return at >= 0 ? at + long(e - d) : -1;
	}

	bool check_set(const Guarded &db, char *d, int c, size_t n)
	{
		char *w0 = std::max(db.lo, d - slack), *w1 = std::min(db.hi, d + n + slack);
		size_t wn = size_t(w1 - w0);
		memset(w0, sentinel, wn);
		exp_.assign(wn, char(sentinel));
		ref_memset(exp_.data() + (d - w0), c, n);
		void *r = set(d, c, n);
		if (r != d) {
			ADD_FAILURE() << "memset n=" << n << ": returned " << r << ", not dst " << (void *)d;
			return false;
		}
		long at = first_diff(w0, exp_.data(), wn);
		if (at >= 0) {
			ADD_FAILURE() << "memset c=" << c << " n=" << n << " dst%64=" << (uintptr_t(d) & 63)
				      << ": byte " << (w0 + at - d) << " relative to dst is wrong";
			return false;
		}
		return true;
	}

	// memmove (or memcpy) of n bytes within one buffer from offset so to
	// offset do, against the reference on a snapshot of the whole range.
	bool check_overlap(CopyFn fn, const char *what, char *buf, size_t len, size_t so, size_t dof, size_t n)
	{
		fill_pattern(buf, len, uint32_t(n + so * 7 + dof * 13));
		exp_.assign(buf, buf + len);
		ref_memmove(exp_.data() + dof, exp_.data() + so, n);
		void *r = copy(fn, what, buf + dof, buf + so, n);
		long at = first_diff(buf, exp_.data(), len);
		if (r != buf + dof || at >= 0) {
			ADD_FAILURE() << what << " n=" << n << " dst-src=" << (long(dof) - long(so))
				      << (r != buf + dof ? ": wrong return value" : ": wrong byte at dst+")
				      << (at >= 0 ? long(at) - long(dof) : 0);
			return false;
		}
		return true;
	}

	// Both copy functions over sizes [n0, n1] and the given alignments.
	void copies(size_t n0, size_t n1, const std::vector<std::pair<int, int>> &aligns)
	{
		const Variant &v = GetParam();
		Guarded sb(n1 + 4096), db(n1 + 4096);
		fill_pattern(sb.lo, sb.size(), 1);
		for (size_t n = n0; n <= n1; n++)
			for (auto [da, sa] : aligns)
				for (auto [fn, what] : {std::pair{v.memcpy_fn, "memcpy"}, std::pair{v.memmove_fn, "memmove"}})
					if (!check_copy(fn, what, db, db.lo + slack + da, sb.lo + 64 + sa, n))
						return;
	}

	std::vector<char> exp_;
};

TEST_P(MemTest, ZeroSizeTouchesNothing)
{
	const Variant &v = GetParam();
	Guarded g(4096);
	mprotect(g.lo, 4096, PROT_NONE);   // the whole buffer is a guard now
	char *bad[] = {nullptr, reinterpret_cast<char *>(1), g.lo, g.lo + 4095,
		       reinterpret_cast<char *>(uintptr_t(0xdead0000beef))};
	for (char *d : bad)
		for (char *s : bad) {
			EXPECT_EQ(copy(v.memcpy_fn, "memcpy", d, s, 0), d);
			EXPECT_EQ(copy(v.memmove_fn, "memmove", d, s, 0), d);
		}
	for (char *d : bad)
		EXPECT_EQ(set(d, 'x', 0), d);
}

// Every size 0..256, every dst and src alignment 0..63 (the full cross
// product), sentinels around dst.
TEST_P(MemTest, CopySmallAllAlignments)
{
	std::vector<std::pair<int, int>> a;
	for (int d = 0; d < 64; d++)
		for (int s = 0; s < 64; s++)
			a.push_back({d, s});
	copies(0, 256, a);
}

// Every size 257..1024 with sampled alignments.
TEST_P(MemTest, CopyMediumSampledAlignments)
{
	copies(257, 1024, {{0, 0}, {1, 3}, {63, 1}, {32, 0}, {0, 31}, {17, 17}, {5, 60}, {48, 16}});
}

// Every power of two +-1 up to 64 MiB; fewer alignments as sizes grow.
TEST_P(MemTest, CopyPowersOfTwo)
{
	const Variant &v = GetParam();
	size_t max = size_t(64) << 20;
	Guarded sb(max + 4096), db(max + 4096);
	fill_pattern(sb.lo, sb.size(), 2);
	for (size_t p = 1; p <= max; p *= 2)
		for (size_t n : {p - 1, p, p + 1}) {
			std::vector<std::pair<int, int>> al = {{int(n & 1), 3}};   // aligned dst for odd n
			if (p <= (1 << 20))
				al.push_back({0, 0});
			if (p <= 65536)
				al.insert(al.end(), {{63, 0}, {0, 63}, {32, 16}, {7, 7}});
			for (auto [da, sa] : al)
				for (auto [fn, what] : {std::pair{v.memcpy_fn, "memcpy"}, std::pair{v.memmove_fn, "memmove"}})
					ASSERT_TRUE(check_copy(fn, what, db, db.lo + slack + da, sb.lo + sa, n));
		}
}

// src and dst flush against a PROT_NONE page at their end or their start:
// any read or write outside [s, s + n) or [d, d + n) faults.
TEST_P(MemTest, GuardPages)
{
	const Variant &v = GetParam();
	size_t sizes_max = 70000;
	Guarded sb(sizes_max), db(sizes_max);
	fill_pattern(sb.lo, sb.size(), 3);
	std::vector<size_t> sizes;
	for (size_t n = 0; n <= 1024; n++)
		sizes.push_back(n);
	for (size_t n : {2047, 2048, 4095, 4096, 4097, 8191, 65535, 65536, 65537})
		sizes.push_back(n);
	for (size_t n : sizes) {
		for (int mode = 0; mode < 4; mode++) {
			const char *s = mode & 1 ? sb.hi - n : sb.lo;
			char *d = mode & 2 ? db.hi - n : db.lo;
			for (auto [fn, what] : {std::pair{v.memcpy_fn, "memcpy"}, std::pair{v.memmove_fn, "memmove"}})
				ASSERT_TRUE(check_copy(fn, what, db, d, s, n)) << "guard mode " << mode;
		}
		ASSERT_TRUE(check_set(db, db.lo, 0x5a, n));
		ASSERT_TRUE(check_set(db, db.hi - n, 0x5a, n));
	}
}

// memmove (and memcpy, which tolerates overlap) at every distance 1..512
// in both directions, and at large distances with large sizes.
TEST_P(MemTest, Overlap)
{
	const Variant &v = GetParam();
	std::vector<char> buf(8192 + 1024);
	for (size_t k = 1; k <= 512; k++)
		for (size_t n : {k + 1, 2 * k, 3 * k + 5, size_t(70), size_t(300), size_t(600), size_t(1500), size_t(5000)}) {
			if (n <= k)
				continue;
			for (auto [fn, what] : {std::pair{v.memmove_fn, "memmove"}, std::pair{v.memcpy_fn, "memcpy"}}) {
				ASSERT_TRUE(check_overlap(fn, what, buf.data(), buf.size(), 100, 100 + k, n));   // dst above
				ASSERT_TRUE(check_overlap(fn, what, buf.data(), buf.size(), 100 + k, 100, n));   // dst below
			}
		}
}

TEST_P(MemTest, OverlapLarge)
{
	const Variant &v = GetParam();
	struct { size_t k, n; } cases[] = {
		{4095, 6000}, {4096, 10000}, {4097, 100000}, {8192, 100000}, {65536, 1 << 20},
		{(1 << 20) + 1, 3 << 20}, {64, 3 << 20}, {33, 40000},
	};
	std::vector<char> buf((5 << 20) + 4096);
	for (auto c : cases) {
		size_t len = c.n + c.k + 64;
		ASSERT_TRUE(check_overlap(v.memmove_fn, "memmove", buf.data(), len, 0, c.k + 5, c.n));
		ASSERT_TRUE(check_overlap(v.memmove_fn, "memmove", buf.data(), len, c.k + 5, 0, c.n));
		ASSERT_TRUE(check_overlap(v.memcpy_fn, "memcpy", buf.data(), len, c.k + 5, 0, c.n));
	}
}

TEST_P(MemTest, Set)
{
	Guarded db(1 << 20);
	for (size_t n = 0; n <= 1024; n++)
		for (int a = 0; a < 64; a++)
			ASSERT_TRUE(check_set(db, db.lo + slack + a, n & 1 ? 0 : 0xc3, n));
	for (size_t p = 1; p <= (size_t(1) << 19); p *= 2)
		for (size_t n : {p - 1, p, p + 1})
			for (int a : {0, 1, 33, 63})
				ASSERT_TRUE(check_set(db, db.lo + slack + a, 0x77, n));
	// The value is c converted to unsigned char.
	for (int c : {0x1ab, -1, -200, 256, 0x7fffffff, int(0x80000041)})
		for (size_t n : {size_t(1), size_t(7), size_t(33), size_t(100), size_t(5000)})
			ASSERT_TRUE(check_set(db, db.lo + slack + 3, c, n));
}

// Seeded random differential test: a million operations of random kind,
// size (mostly small), alignment and overlap on one arena, mirrored by the
// references on a copy; UARCH_SEED=<n> reproduces a run.
TEST_P(MemTest, RandomDifferential)
{
	const Variant &v = GetParam();
	uint64_t seed;
	if (const char *e = getenv("UARCH_SEED"))
		seed = strtoull(e, nullptr, 0);
	else
		seed = std::random_device{}() | uint64_t(std::random_device{}()) << 32;
	printf("[ %s ] RandomDifferential seed: UARCH_SEED=%llu\n", v.name.c_str(), (unsigned long long)seed);
	std::mt19937_64 rng(seed);
	const size_t arena = 1 << 18;
	Guarded g(arena);
	std::vector<char> mirror(arena);
	fill_pattern(g.lo, arena, uint32_t(seed));
	memcpy(mirror.data(), g.lo, arena);
	auto size = [&] {
		uint32_t r = rng() % 1000;
		size_t lim = r < 600 ? 64 : r < 900 ? 512 : r < 990 ? 4096 : 32768;
		return size_t(rng() % (lim + 1));
	};
	const long cases = 1000000;
	for (long i = 0; i < cases; i++) {
		int op = int(rng() % 3);
		size_t n = size();
		size_t d = rng() % (arena - n + 1), s;
		if (rng() % 4 == 0) {   // overlapping, either direction
			long k = long(rng() % (n + 1)) * (rng() & 1 ? 1 : -1);
			s = size_t(std::clamp(long(d) + k, 0L, long(arena - n)));
		} else {
			s = rng() % (arena - n + 1);
		}
		void *r;
		if (op == 2) {
			int c = int(rng());
			r = set(g.lo + d, c, n);
			ref_memset(mirror.data() + d, c, n);
		} else {
			r = copy(op ? v.memmove_fn : v.memcpy_fn, op ? "memmove" : "memcpy", g.lo + d, g.lo + s, n);
			ref_memmove(mirror.data() + d, mirror.data() + s, n);
		}
		size_t w0 = d > 64 ? d - 64 : 0, w1 = std::min(arena, d + n + 64);
		if (r != g.lo + d || memcmp(g.lo + w0, mirror.data() + w0, w1 - w0)) {
			FAIL() << "case " << i << " of seed " << seed << ": " << (op == 2 ? "memset" : op ? "memmove" : "memcpy")
			       << " n=" << n << " d=" << d << " s=" << s << (r != g.lo + d ? " (return value)" : "");
		}
	}
}

// The rep movsb / rep stosb and non-temporal paths at small sizes: narrow
// the windows (movsb and stosb [64, 1 MiB), NT from 256 KiB), run the
// size, alignment and overlap checks again, then restore the defaults.
// Only the variants linked into this test see these parameters; the
// exported ones are run with the same windows through UARCH_TUNABLES by
// the mem_tunables test.
TEST_P(MemTest, NarrowStringWindows)
{
	if (GetParam().impl == Impl::none)
		GTEST_SKIP() << "bound: covered by the mem_tunables test (UARCH_TUNABLES)";
	Plan p = host_plan();
	p.mem.movsb_min = 64;
	p.mem.movsb_max = 1 << 20;
	p.mem.stosb_min = 64;
	p.mem.stosb_max = 1 << 20;
	p.mem.nt_min = 256 << 10;
	set_arch_params(p);
	struct Restore { ~Restore() { set_arch_params(host_plan()); } } restore;
	copies(0, 1024, {{0, 0}, {1, 3}, {63, 1}, {32, 0}});
	const Variant &v = GetParam();
	Guarded sb(4 << 20), db(4 << 20);
	fill_pattern(sb.lo, sb.size(), 4);
	for (size_t n : {4095, 4096, 65537, 262143, 262144, 262145, 1048575, 1048576, 1048577, 3 << 20})
		for (auto [da, sa] : {std::pair{0, 0}, std::pair{1, 3}, std::pair{60, 2}}) {
			ASSERT_TRUE(check_copy(v.memcpy_fn, "memcpy", db, db.lo + slack + da, sb.lo + sa, n));
			ASSERT_TRUE(check_copy(v.memmove_fn, "memmove", db, db.lo + slack + da, sb.lo + sa, n));
			ASSERT_TRUE(check_set(db, db.lo + slack + da, 0x3c, n));
		}
	std::vector<char> buf(3 << 20);
	for (size_t k : {1, 63, 64, 4095, 4096, 8192, 100000})
		for (size_t n : {size_t(200), size_t(5000), size_t(300000), size_t(2 << 20)}) {
			ASSERT_TRUE(check_overlap(v.memmove_fn, "memmove", buf.data(), n + k + 8, 0, k, n));
			ASSERT_TRUE(check_overlap(v.memmove_fn, "memmove", buf.data(), n + k + 8, k, 0, n));
			ASSERT_TRUE(check_overlap(v.memcpy_fn, "memcpy", buf.data(), n + k + 8, k, 0, n));
		}
}

#if defined(__x86_64__)
// The inline loops end at the first size any window takes (mem.h).
TEST(Params, LoopsEndAtTheFirstWindow)
{
	MemThresholds m{};
	MemParams p = arch_params_for(m);   // every window closed
	EXPECT_EQ(p.copy_loop_max, ~uint64_t(0));
	EXPECT_EQ(p.set_loop_max, ~uint64_t(0));
	m.nt_min = 8 << 20;
	m.nt_fill_min = 64 << 20;
	p = arch_params_for(m);
	EXPECT_EQ(p.copy_loop_max, 8u << 20);
	EXPECT_EQ(p.set_loop_max, 8u << 20);
	m.nt_fill_min = 1 << 20;   // fills of other bytes first
	EXPECT_EQ(arch_params_for(m).set_loop_max, 1u << 20);
	m.movsb_min = 2112, m.movsb_max = 1 << 20;
	m.stosb_min = 2048, m.stosb_max = ~uint64_t(0);
	p = arch_params_for(m);
	EXPECT_EQ(p.copy_loop_max, 2112u);
	EXPECT_EQ(p.set_loop_max, 2048u);
	m.movsb_max = 2112;   // an empty window takes nothing
	EXPECT_EQ(arch_params_for(m).copy_loop_max, 8u << 20);
}

// Which threshold a fill's byte follows: 0 (and 256, which is 0 as a
// byte) nt_min, any other nt_fill_min.
TEST(Streaming, FillByteChoosesTheThreshold)
{
	MemParams p{};
	p.nt_min = 1000;
	p.nt_fill_min = 2000;
	EXPECT_EQ(uarch::nt_fill_from(p, 0), 1000u);
	EXPECT_EQ(uarch::nt_fill_from(p, uint8_t(256)), 1000u);
	EXPECT_EQ(uarch::nt_fill_from(p, 0x3c), 2000u);
	EXPECT_EQ(uarch::nt_fill_from(p, uint8_t(0x13c)), 2000u);
	EXPECT_EQ(uarch::nt_fill_from(p, 0xff), 2000u);
}

// Zero fills and fills of other bytes stream from their own thresholds
// (plan.h): each side of each threshold, both orders of the two, both
// bytes, and the bytes around the buffer untouched.
TEST_P(MemTest, FillsStreamFromTheirOwnThreshold)
{
	if (GetParam().impl == Impl::none)
		GTEST_SKIP() << "bound: covered by the mem_tunables test (UARCH_TUNABLES)";
	const Variant &v = GetParam();
	struct Restore { ~Restore() { set_arch_params(host_plan()); } } restore;
	Guarded db(2 << 20);
	for (auto [zero_from, other_from] : {std::pair<uint64_t, uint64_t>{256 << 10, 0}, {0, 256 << 10},
					      {256 << 10, 1 << 20}, {1 << 20, 256 << 10}}) {
		Plan p = host_plan();
		p.mem.stosb_min = p.mem.stosb_max = 0;
		p.mem.nt_min = zero_from;
		p.mem.nt_fill_min = other_from;
		set_arch_params(p);
		for (size_t n : {size_t(256 << 10) - 1, size_t(256 << 10), size_t(300001), size_t(1 << 20), size_t(1 << 20) + 65})
			for (int da : {0, 1, 33})
				for (int c : {0, 0x3c, 256, -1}) {
					ASSERT_TRUE(check_set(db, db.lo + slack + da, c, n))
						<< v.name << " n=" << n << " byte " << c << " nt_min " << zero_from << " nt_fill_min " << other_from;
				}
	}
}

// With rep movsb and rep stosb closed (no ERMS, or a policy's "never"), a
// copy or fill past the non-temporal threshold reaches the large path and
// streams: the bytes still arrive. (A fill took the inline loop of the
// avx2 and sse2 variants whenever rep stosb was closed, at every size.)
TEST_P(MemTest, ClosedWindowsStillReachTheLargePath)
{
	if (GetParam().impl == Impl::none)
		GTEST_SKIP() << "bound: its windows are the binder's";
	if (GetParam().impl == Impl::generic || GetParam().impl == Impl::erms)
		GTEST_SKIP() << GetParam().name << ": no windows (C reference; rep movsb/stosb at every size)";
	const Variant &v = GetParam();
	Plan p = host_plan();
	p.mem.movsb_min = p.mem.movsb_max = 0;
	p.mem.stosb_min = p.mem.stosb_max = 0;
	p.mem.nt_min = p.mem.nt_fill_min = 512 << 10;
	struct Restore { ~Restore() { set_arch_params(host_plan()); } } restore;
	std::vector<char> a(1 << 20), b(1 << 20, 0);
	for (size_t i = 0; i < a.size(); i++)
		a[i] = char(i * 7 + 1);
	set_arch_params(p);
	v.memset_fn(b.data(), 5, b.size());
	EXPECT_EQ(std::vector<char>(b.size(), 5), b) << "memset of 1 MiB, streaming";
	v.memcpy_fn(b.data(), a.data(), a.size());
	EXPECT_EQ(a, b) << "memcpy of 1 MiB, streaming";
}

// rep movsb is refused where dst is near src (mod 4 GiB) or just past it
// modulo 4 KiB, where it runs up to 28x slower (mem_blocks.h).
TEST(Movsb, DistanceRule)
{
	// Addresses as integers: only their difference matters, nothing is read.
	const uintptr_t s = uintptr_t(1) << 40;
	auto ok = [&](int64_t delta) {
		return uarch::movsb_distance_ok(reinterpret_cast<const char *>(s + uintptr_t(delta)),
						reinterpret_cast<const char *>(s));
	};
	EXPECT_TRUE(ok(1 << 20));
	EXPECT_TRUE(ok(-(1 << 20)));
	EXPECT_TRUE(ok((1 << 20) + 64));
	EXPECT_TRUE(ok((1 << 20) + 4095));
	EXPECT_TRUE(ok((1 << 20) - 1));   // dst just below src modulo 4 KiB: fast
	for (int64_t k : {1, 2, 8, 16, 31, 32, 63})
		EXPECT_FALSE(ok((1 << 20) + k)) << k;
	EXPECT_FALSE(ok(4096));
	EXPECT_FALSE(ok(-8191));
	EXPECT_TRUE(ok(8192));
	EXPECT_FALSE(ok((int64_t(1) << 32) + 100));   // near modulo 4 GiB
}

#endif

INSTANTIATE_TEST_SUITE_P(Variants, MemTest, testing::ValuesIn(all_variants()),
			 [](const testing::TestParamInfo<Variant> &i) { return i.param.name; });

class Summary : public testing::Environment {
public:
	void SetUp() override
	{
		// The variants linked into this test follow the host's default plan,
		// as the binder would set it.
		Plan p = host_plan();
		set_arch_params(p);
		printf("mem: checked calls see %s\n", checked::coverage().c_str());
		printf("mem: bound memcpy=%s memmove=%s memset=%s; movsb [%llu, %llu) stosb [%llu, %llu) nt_min %llu nt_fill_min %llu\n",
		       uarch_impl("memcpy"), uarch_impl("memmove"), uarch_impl("memset"),
		       (unsigned long long)p.mem.movsb_min, (unsigned long long)p.mem.movsb_max,
		       (unsigned long long)p.mem.stosb_min, (unsigned long long)p.mem.stosb_max,
		       (unsigned long long)p.mem.nt_min, (unsigned long long)p.mem.nt_fill_min);
	}
	void TearDown() override
	{
		std::string names;
		for (auto &n : g_skipped_names)
			if (names.find(n) == std::string::npos)
				names += " " + n;
		printf("mem: %d variant tests ran, %d skipped (%s )\n", g_ran, g_skipped, names.c_str());
	}
};
const testing::Environment *const summary = testing::AddGlobalTestEnvironment(new Summary);

} // namespace
