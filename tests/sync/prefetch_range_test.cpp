// prefetch_range's address generation. Prefetches cannot be observed, so
// the loop is a helper (uarch::for_each_prefetch_block) that the variant
// calls with a prefetch and this test calls with a recorder: every block of
// [p, p + len) must be visited exactly once, in order, for many p, len and
// strides, including ranges that wrap past the top of the address space.
#include <gtest/gtest.h>
#include <stdint.h>
#include <random>
#include <vector>
#include "arch_sync.h"

namespace {

using u128 = unsigned __int128;
constexpr uintptr_t top = ~uintptr_t(0);

std::vector<uintptr_t> visited(uintptr_t p, size_t len, uint32_t shift)
{
	std::vector<uintptr_t> v;
	uarch::for_each_prefetch_block(p, len, shift, [&](uintptr_t a) { v.push_back(a); });
	return v;
}

// The blocks [p, p + len) touches, computed independently: in 128-bit
// arithmetic, the range clipped at the top of the address space.
std::vector<uintptr_t> expected(uintptr_t p, size_t len, uint32_t shift)
{
	std::vector<uintptr_t> v;
	if (!len)
		return v;
	u128 stride = u128(1) << shift;
	u128 end = u128(p) + len;           // exclusive
	if (end > u128(top) + 1)
		end = u128(top) + 1;
	for (u128 b = u128(p) / stride * stride; b < end; b += stride)
		v.push_back(uintptr_t(b));
	return v;
}

// The number of blocks, without building them (to skip huge cases).
u128 nblocks(uintptr_t p, size_t len, uint32_t shift)
{
	if (!len)
		return 0;
	u128 end = u128(p) + len;
	if (end > u128(top) + 1)
		end = u128(top) + 1;
	return ((end - 1) >> shift) - (p >> shift) + 1;
}

void check(uintptr_t p, size_t len, uint32_t shift, uint64_t *cases)
{
	if (nblocks(p, len, shift) > (1u << 16))
		return;
	auto got = visited(p, len, shift);
	auto want = expected(p, len, shift);
	ASSERT_EQ(got, want) << std::hex << "p=0x" << p << " len=0x" << len << " shift=" << std::dec << shift;
	++*cases;
}

const uint32_t shifts[] = {4, 5, 6, 7, 8, 9, 12};

} // namespace

TEST(PrefetchRange, LenZeroVisitsNothing)
{
	for (uint32_t s : shifts)
		for (uintptr_t p : {uintptr_t(0), uintptr_t(1), uintptr_t(4096), top - 63, top})
			EXPECT_TRUE(visited(p, 0, s).empty()) << p;
}

TEST(PrefetchRange, EveryBlockOnceEdgeCases)
{
	const uintptr_t bases[] = {
		0, 1, 15, 16, 63, 64, 65, 127, 4095, 4096, 4097,
		uintptr_t(0x00007ffffffff000), uintptr_t(0x00007fffffffffc1),  // below the canonical hole
		uintptr_t(0xffff800000000000), uintptr_t(0x8000000000000000),
		top - 4096, top - 4095, top - 256, top - 64, top - 63, top - 1, top,
	};
	const size_t lens[] = {1, 2, 15, 16, 17, 63, 64, 65, 127, 128, 129, 255, 256, 257,
			       4095, 4096, 4097, 65536, 1 << 20};
	uint64_t cases = 0;
	for (uint32_t s : shifts)
		for (uintptr_t p : bases) {
			for (size_t len : lens)
				check(p, len, s, &cases);
			// Ranges that end exactly at the top, one past it (wraps
			// by one byte) and everything (wraps by almost 2^64).
			check(p, size_t(top - p) + 1, s, &cases);
			check(p, size_t(top - p) + 2, s, &cases);
			check(p, ~size_t(0), s, &cases);
		}
	printf("[ cases    ] %llu edge cases\n", (unsigned long long)cases);
	EXPECT_GT(cases, 2000u);
}

TEST(PrefetchRange, EveryBlockOnceRandom)
{
	std::mt19937_64 rng(4);
	uint64_t cases = 0;
	for (int i = 0; i < 200000; i++) {
		uint32_t s = shifts[rng() % (sizeof shifts / sizeof shifts[0])];
		uintptr_t p = rng();
		switch (rng() % 4) {
		case 0: p = top - (rng() % 8192); break;      // near the top: wraps
		case 1: p &= 0xffff; break;                   // near NULL
		default: break;
		}
		size_t len = rng() % 3 == 0 ? rng() % 64 : rng() % 16384;
		check(p, len, s, &cases);
	}
	printf("[ cases    ] %llu random cases\n", (unsigned long long)cases);
	EXPECT_EQ(cases, 200000u);
}

// The binder hands the plan's stride to the variant: a power of two,
// rounded up, clamped to [16, 4096].
TEST(PrefetchRange, StrideFromPlan)
{
#if !SYNC_TEST_HAVE_ARCH
	GTEST_SKIP() << "stride: no prefetch_range variant of this architecture";
#else
	uint32_t saved = uarch::prefetch_stride_shift();
	struct { uint32_t stride, shift; } cases[] = {
		{0, 4}, {1, 4}, {16, 4}, {17, 5}, {64, 6}, {65, 7}, {128, 7}, {256, 8},
		{4096, 12}, {4097, 12}, {1u << 31, 12},
	};
	for (auto c : cases) {
		uarch::set_prefetch_stride(c.stride);
		EXPECT_EQ(uarch::prefetch_stride_shift(), c.shift) << c.stride;
	}
	uarch::set_prefetch_stride(1u << saved);
	EXPECT_EQ(uarch::prefetch_stride_shift(), saved);
#endif
}
