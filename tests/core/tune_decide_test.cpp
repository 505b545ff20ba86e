// uarch-tune's decision on synthetic timings: nothing is timed here.
#include <gtest/gtest.h>
#include "decide.h"

using namespace uarch::tune;

namespace {

Timing t(double ns, double spread = 0.01) { return Timing{ns, spread}; }

// rep/loop time ratio per size, the same at both alignments unless mis is given.
std::vector<RepRow> rows(std::initializer_list<std::pair<uint64_t, double>> ratio,
			 std::vector<double> mis = {})
{
	std::vector<RepRow> v;
	size_t i = 0;
	for (auto [size, r] : ratio) {
		RepRow row;
		row.size = size;
		double m = i < mis.size() ? mis[i] : r;
		row.loop[aligned] = t(100);
		row.rep[aligned] = t(100 * r);
		row.loop[misaligned] = t(100);
		row.rep[misaligned] = t(100 * m);
		v.push_back(row);
		i++;
	}
	return v;
}

// One size of streaming against cached stores: the cached side 1000 ns.
NtRow nt_row(uint64_t size, double nt_ns)
{
	NtRow r;
	r.size = size;
	r.temporal = t(1000);
	r.nt = t(nt_ns);
	return r;
}

} // namespace

TEST(TuneDecide, RepWindowIsTheLongestWinningRun)
{
	auto r = rows({{1024, 1.5}, {2048, 0.8}, {4096, 0.8}, {8192, 1.2}, {16384, 0.7}, {32768, 0.7}, {65536, 0.7},
		       {131072, 1.1}});
	Window w = rep_window(r, 0.03);
	EXPECT_EQ(w.min, 16384u);
	EXPECT_EQ(w.max, 131072u);
}

// The Emerald Rapids guest's rep stosb: wins of 4-5% (within its noise) at
// 48-512 KiB, 8-31% from 2 MiB. The longest run of wins was the noise; the
// window with the most gain is the large one.
TEST(TuneDecide, RepWindowWeighsTheGainNotTheLength)
{
	auto r = rows({{32768, 1.01}, {49152, 0.96}, {65536, 0.95}, {131072, 0.96}, {262144, 0.955},
		       {524288, 1.0}, {1 << 20, 1.02}, {2 << 20, 0.92}, {4 << 20, 0.85}, {8 << 20, 0.76}});
	Window w = rep_window(r, 0.03);
	EXPECT_EQ(w.min, 2u << 20);
	EXPECT_EQ(w.max, Window::open);
	// A 5% loss between large wins stays inside the window; a 30% loss
	// splits it, and the side with more gain is kept.
	r = rows({{4096, 0.7}, {8192, 0.7}, {16384, 1.05}, {32768, 0.7}, {65536, 0.7}, {131072, 1.2}});
	w = rep_window(r, 0.03);
	EXPECT_EQ(w.min, 4096u);
	EXPECT_EQ(w.max, 131072u);
	r = rows({{4096, 0.8}, {8192, 0.8}, {16384, 1.3}, {32768, 0.7}, {65536, 0.7}, {131072, 1.2}});
	w = rep_window(r, 0.03);
	EXPECT_EQ(w.min, 32768u);
	EXPECT_EQ(w.max, 131072u);
}

// uarch-tune's evidence on the Emerald Rapids guest (Xeon family 6 model
// 0xcf, FSRM): the avx512 copy loop against rep movsb, ns per call, dst
// aligned and dst+1, sizes below its 16 MiB non-temporal threshold. Rep
// wins clearly at 24-26 KiB and 1 MiB, and stays 0-4% ahead (within the
// margin) from 28 KiB to 512 KiB. The window runs across that plateau to
// 1 MiB; it once stopped at 28 KiB, and the loop then copied 1 MiB at
// 0.89-0.90x glibc's (uarch-bench mem).
TEST(TuneDecide, RepWindowSpansAPlateauWhereRepStaysAhead)
{
	struct { uint64_t size; double loop, rep, loop1, rep1; } emr[] = {
		{512, 3.5, 3.5, 6.6, 6.6},
		{1024, 7.1, 20.9, 10.2, 23.2},
		{2048, 13.9, 25.1, 18.0, 27.0},
		{4096, 27.0, 31.7, 38.2, 38.3},
		{8192, 51.1, 53.4, 65.5, 66.4},
		{16384, 101.4, 103.8, 125.5, 126.9},
		{20480, 128.3, 129.3, 158.9, 157.5},
		{24576, 192.9, 165.8, 271.8, 209.6},
		{26624, 613.6, 450.5, 670.5, 533.9},
		{28672, 824.1, 785.2, 819.7, 795.7},
		{32768, 969.2, 956.0, 980.0, 980.1},
		{49152, 1399.5, 1375.2, 1475.5, 1462.0},
		{65536, 1997.2, 1944.0, 1964.8, 1943.6},
		{131072, 3968.2, 3809.4, 3919.0, 3878.2},
		{262144, 7759.0, 7585.4, 7813.2, 7756.0},
		{524288, 15563.0, 15211.8, 16094.8, 16080.5},
		{1048576, 53016.5, 48372.0, 54064.5, 50532.5},
		{2097152, 198825.0, 195539.0, 184873.0, 186762.0},
		{4194304, 386605.0, 389063.0, 377451.0, 387821.0},
		{8388608, 766432.0, 770432.0, 772893.0, 790713.0},
		{16777216, 1565006.0, 1551623.0, 1541614.0, 1555499.0},
	};
	std::vector<RepRow> r;
	for (auto e : emr) {
		RepRow row;
		row.size = e.size;
		row.loop[aligned] = t(e.loop);
		row.rep[aligned] = t(e.rep);
		row.loop[misaligned] = t(e.loop1);
		row.rep[misaligned] = t(e.rep1);
		r.push_back(row);
	}
	Window w = rep_window(r, 0.03, 16u << 20);
	EXPECT_EQ(w.min, 24576u);
	EXPECT_EQ(w.max, 2u << 20);
	// A loss inside the plateau still ends it there: rep 2% slower at
	// 64 KiB, dst+1.
	r[12].rep[misaligned] = t(r[12].loop[misaligned].ns * 1.02);
	w = rep_window(r, 0.03, 16u << 20);
	EXPECT_EQ(w.min, 24576u);
	EXPECT_EQ(w.max, 28672u);
}

TEST(TuneDecide, RepWindowOpenWhenItWinsToTheEnd)
{
	Window w = rep_window(rows({{1024, 1.2}, {2048, 0.9}, {4096, 0.9}}), 0.03);
	EXPECT_EQ(w.min, 2048u);
	EXPECT_EQ(w.max, Window::open);
}

TEST(TuneDecide, NeverWhenRepLosesOrTiesOrWinsOnce)
{
	EXPECT_EQ(rep_window(rows({{1024, 1.2}, {2048, 1.1}}), 0.03).min, 0u);
	// Within the margin is a tie: the loop keeps it.
	EXPECT_EQ(rep_window(rows({{1024, 0.98}, {2048, 0.99}}), 0.03).min, 0u);
	// A single winning size between losing ones: noise, not a crossover.
	EXPECT_EQ(rep_window(rows({{1024, 1.2}, {2048, 0.8}, {4096, 1.2}}), 0.03).min, 0u);
	EXPECT_EQ(rep_window({}, 0.03).min, 0u);
}

// A size the tuner could not time (a timing of 0) neither wins nor is a
// neutral plateau: it breaks the window like a loss.
TEST(TuneDecide, UntimedSizeNeverWinsAndBreaksTheWindow)
{
	auto r = rows({{2048, 0.8}, {4096, 0.8}, {8192, 0.8}, {16384, 0.8}, {32768, 0.8}});
	r[2].rep[misaligned] = t(0);
	Window w = rep_window(r, 0.03);
	// [2048, 8192) and [16384, open) score alike; a tie goes to the first.
	EXPECT_EQ(w.min, 2048u);
	EXPECT_EQ(w.max, 8192u);
	r[0].loop[aligned] = t(0);
	r[1].loop[aligned] = t(0);
	EXPECT_EQ(rep_window(r, 0.03).min, 16384u);
}

TEST(TuneDecide, MisalignedLossVetoesTheSize)
{
	// Aligned rep wins everywhere, but dst+1 loses at 2 and 4 KiB (Zen's
	// misaligned rep movsb): the window starts where both win.
	auto r = rows({{2048, 0.7}, {4096, 0.7}, {8192, 0.7}, {16384, 0.7}}, {1.5, 1.2, 0.8, 0.8});
	Window w = rep_window(r, 0.03);
	EXPECT_EQ(w.min, 8192u);
	EXPECT_EQ(w.max, Window::open);
}

TEST(TuneDecide, NonTemporalFromTheFirstSizeOfTheWinningSuffix)
{
	std::vector<NtRow> nt;
	for (auto [size, ratio] : {std::pair<uint64_t, double>{1 << 20, 1.1}, {2 << 20, 0.9}, {4 << 20, 1.05},
				   {8 << 20, 0.8}, {16 << 20, 0.7}})
		nt.push_back(nt_row(size, 1000 * ratio));
	uint64_t at = 0;
	ASSERT_TRUE(nt_threshold(nt, 0.03, &at));
	EXPECT_EQ(at, 8u << 20);   // 2 MiB won, but 4 MiB did not: not from 2 MiB
	nt.back().nt = t(1000);
	EXPECT_FALSE(nt_threshold(nt, 0.03, &at));
}

TEST(TuneDecide, StrideAndSpin)
{
	std::vector<StrideRow> s = {{64, t(100)}, {128, t(102)}, {256, t(140)}};
	EXPECT_EQ(best_stride(s, 0.03), 128u);   // within 3% of the best: fewer prefetches
	s[1].t = t(110);
	EXPECT_EQ(best_stride(s, 0.03), 64u);
	EXPECT_EQ(spin_budget(t(4830)), 4800u);
	EXPECT_EQ(spin_budget(t(200)), 1000u);
	EXPECT_EQ(spin_budget(t(5e6)), 100000u);
	EXPECT_EQ(spin_budget(t(0)), 0u);
}

// Streaming never starts below the floor (decide.h: a contended L3 made
// 2 MiB win in one run), and the floor alone never makes it start.
TEST(TuneDecide, NonTemporalFloor)
{
	Evidence e;
	for (uint64_t n : {1u << 20, 2u << 20, 4u << 20, 8u << 20, 16u << 20})
		e.nt.push_back(nt_row(n, n == 1u << 20 ? 1100 : 900));
	e.futex_wake = t(5000);
	Rules rules;
	EXPECT_EQ(decide(e, rules).nt_min, 2u << 20);
	rules.nt_floor = 8u << 20;
	Profile p = decide(e, rules);
	EXPECT_TRUE(p.have_nt);
	EXPECT_EQ(p.nt_min, 8u << 20);
	rules.nt_floor = 1u << 20;   // below the measured crossover: the measurement
	EXPECT_EQ(decide(e, rules).nt_min, 2u << 20);
	for (NtRow &r : e.nt)
		r.nt = t(1000);   // never wins: no threshold, floor or not
	rules.nt_floor = 8u << 20;
	EXPECT_FALSE(decide(e, rules).have_nt);
}

// Fills of a byte other than 0 get their own threshold: where streaming
// wins from there to the largest size, at least the floor; none (the
// policy's stays) where it does not win at the largest size tried.
TEST(TuneDecide, NonTemporalFillsApart)
{
	Evidence e;
	for (uint64_t n : {4u << 20, 16u << 20, 64u << 20}) {
		e.nt.push_back(nt_row(n, n == 4u << 20 ? 1100 : 800));
		e.nt_set.push_back(nt_row(n, n == 64u << 20 ? 800 : 3000));
	}
	e.futex_wake = t(5000);
	Rules rules;
	rules.nt_floor = 16u << 20;
	rules.nt_fill_floor = 16u << 20;
	Profile p = decide(e, rules);
	EXPECT_EQ(p.nt_min, 16u << 20);
	EXPECT_TRUE(p.have_nt_fill);
	EXPECT_EQ(p.nt_fill_min, 64u << 20);
	EXPECT_EQ(profile_string(p), "rep_movsb_threshold=0:rep_stosb_threshold=0:nt_threshold=16M:nt_fill_threshold=64M");
	e.nt_set[2].nt = t(1100);   // loses at 64 MiB too: nothing said
	p = decide(e, rules);
	EXPECT_FALSE(p.have_nt_fill);
	EXPECT_EQ(profile_string(p), "rep_movsb_threshold=0:rep_stosb_threshold=0:nt_threshold=16M");
	for (NtRow &r : e.nt_set)
		r.nt = t(500);   // wins everywhere: from the floor
	EXPECT_EQ(decide(e, rules).nt_fill_min, 16u << 20);
}

TEST(TuneDecide, ProfileCapsMovsbAtNonTemporalAndRefusesNoise)
{
	Evidence e;
	e.movsb = rows({{16384, 1.2}, {32768, 0.7}, {65536, 0.7}, {1 << 20, 0.8}, {4 << 20, 0.8}});
	// rep stosb wins only at the last size below the non-temporal threshold.
	e.stosb = rows({{16384, 1.3}, {32768, 1.3}, {65536, 1.3}, {1 << 20, 0.9}, {4 << 20, 1.1}});
	for (uint64_t n : {1u << 20, 2u << 20, 4u << 20})
		e.nt.push_back(nt_row(n, n == 1u << 20 ? 1100 : 800));
	e.stride = {{64, t(100)}, {128, t(120)}};
	e.futex_wake = t(5000);
	e.want_spin = true;
	Rules rules;
	Profile p = decide(e, rules);
	EXPECT_FALSE(p.too_noisy);
	EXPECT_EQ(p.movsb.min, 32768u);
	EXPECT_EQ(p.movsb.max, 2u << 20);   // capped where NT stores take over
	EXPECT_EQ(p.stosb.min, 1u << 20);
	EXPECT_EQ(p.stosb.max, Window::open);   // no evidence that streaming fills win
	EXPECT_TRUE(p.have_nt);
	EXPECT_EQ(p.nt_min, 2u << 20);
	EXPECT_EQ(profile_string(p), "rep_movsb_threshold=32K:rep_movsb_stop=2M:rep_stosb_threshold=1M:"
				     "nt_threshold=2M:prefetch_stride=64:idle_spin_ns=5000");
	// Streaming fills win from 4 MiB: rep stosb gives way there.
	e.nt_set = e.nt;
	e.nt_set[1].nt = t(1000);
	EXPECT_EQ(decide(e, rules).stosb.max, 4u << 20);
	e.nt_set = e.nt;   // from 2 MiB, the threshold itself
	EXPECT_EQ(decide(e, rules).stosb.max, 2u << 20);
	e.nt_set.clear();
	EXPECT_FALSE(decide(e, rules).have_nt_fill);   // fills not measured: nothing said
	e.want_spin = false;   // a monitor stage follows: no spin budget written
	EXPECT_EQ(decide(e, rules).spin_ns, 0u);

	// Repeated medians 20% apart: refuse.
	for (RepRow &r : e.movsb)
		r.loop[aligned].spread = r.rep[aligned].spread = r.loop[misaligned].spread = r.rep[misaligned].spread = 0.2;
	for (RepRow &r : e.stosb)
		r.loop[aligned].spread = r.rep[aligned].spread = r.loop[misaligned].spread = r.rep[misaligned].spread = 0.2;
	p = decide(e, rules);
	EXPECT_TRUE(p.too_noisy);
	EXPECT_NEAR(p.noise, 0.2, 1e-9);
	rules.noise_limit = 0.25;
	EXPECT_FALSE(decide(e, rules).too_noisy);
}

// uarch-tune --quick on the Zen 5 guest (family 0x1a model 2): the avx512
// copy loop against rep movsb, ns per call, dst aligned and dst+1. Rep
// wins from 28 KiB; 256 KiB is level (0.3% slower aligned), and rep wins
// again at 1 and 4 MiB. The tuner's own window ends at 256 KiB; the
// policy's runs to the L3 size, and nothing timed between contradicts it.
TEST(TuneDecide, TunerWindowRunsOnToThePolicysEnd)
{
	struct { uint64_t size; double loop, rep, loop1, rep1; } zen5[] = {
		{1024, 7.9, 18.6, 8.6, 20.8},
		{4096, 30.2, 46.5, 40.1, 45.2},
		{16384, 124.0, 167.5, 138.1, 172.2},
		{24576, 196.6, 251.5, 226.1, 256.2},
		{28672, 505.4, 295.6, 428.6, 300.6},
		{32768, 531.6, 341.9, 529.1, 356.9},
		{65536, 1040.8, 830.2, 1052.0, 884.1},
		{262144, 3291.0, 3301.5, 4453.5, 4003.0},
		{1048576, 25068.0, 20228.0, 25067.0, 24315.0},
		{4194304, 135035.0, 113444.0, 102814.0, 98456.0},
	};
	Evidence e;
	e.futex_wake = t(5000);
	for (auto z : zen5) {
		RepRow row;
		row.size = z.size;
		row.loop[aligned] = t(z.loop);
		row.rep[aligned] = t(z.rep);
		row.loop[misaligned] = t(z.loop1);
		row.rep[misaligned] = t(z.rep1);
		e.movsb.push_back(row);
	}
	Window own = rep_window(e.movsb, 0.03);
	EXPECT_EQ(own.min, 28672u);
	EXPECT_EQ(own.max, 262144u);
	Rules rules;
	rules.movsb_policy = Window{26u << 10, 32u << 20};
	Profile p = decide(e, rules);
	EXPECT_FALSE(p.movsb_kept);
	EXPECT_EQ(p.movsb.min, 28672u);
	EXPECT_EQ(p.movsb.max, 32u << 20);
	EXPECT_EQ(p.movsb_wins_end, 262144u);
	// Rep slower by the margin at 1 MiB, dst+1: the tuner's end stands.
	e.movsb[8].rep[misaligned] = t(25067.0 * 1.04);
	p = decide(e, rules);
	EXPECT_EQ(p.movsb.max, 262144u);
	EXPECT_EQ(p.movsb_wins_end, 0u);
	// A policy window that ends before the tuner's: the tuner's end.
	e.movsb[8].rep[misaligned] = t(24315.0);
	rules.movsb_policy = Window{26u << 10, 128u << 10};
	EXPECT_EQ(decide(e, rules).movsb.max, 262144u);
}

// The policy's window stays where the tuner finds none of its own and no
// size timed inside it has rep slower by the margin (decide.h): Zen 4's rep
// stosb from 64 KiB, which a replay opened and each size alone runs level.
TEST(TuneDecide, PolicyWindowKeptUnlessContradicted)
{
	Evidence e;
	e.futex_wake = t(5000);
	Rules rules;
	rules.stosb_policy = Window{64u << 10, 512u << 10};
	// Level everywhere, a loss below the window: kept.
	e.stosb = rows({{16384, 1.5}, {65536, 1.0}, {262144, 0.99}, {1 << 20, 1.01}});
	Profile p = decide(e, rules);
	EXPECT_TRUE(p.stosb_kept);
	EXPECT_EQ(p.stosb.min, 64u << 10);
	EXPECT_EQ(p.stosb.max, 512u << 10);
	EXPECT_EQ(profile_string(p), "rep_movsb_threshold=0:rep_stosb_threshold=64K:rep_stosb_stop=512K");
	// Slower within the margin at one alignment, a size not timed: kept.
	e.stosb[1].rep[misaligned] = t(102);
	e.stosb[2].rep[aligned] = t(0);
	EXPECT_TRUE(decide(e, rules).stosb_kept);
	// Slower by the margin inside it, at either alignment: the tuner's never.
	e.stosb[2].rep[aligned] = t(100);
	e.stosb[2].rep[misaligned] = t(104);
	p = decide(e, rules);
	EXPECT_FALSE(p.stosb_kept);
	EXPECT_EQ(p.stosb.min, 0u);
	EXPECT_EQ(profile_string(p), "rep_movsb_threshold=0:rep_stosb_threshold=0");
	// A window of the tuner's own wins over the policy's.
	e.stosb = rows({{65536, 1.0}, {262144, 1.0}, {1 << 20, 0.8}, {4 << 20, 0.8}});
	p = decide(e, rules);
	EXPECT_FALSE(p.stosb_kept);
	EXPECT_EQ(p.stosb.min, 1u << 20);
	// No policy window (the default Rules): never, as before.
	rules.stosb_policy = Window{};
	e.stosb = rows({{65536, 1.0}, {262144, 1.0}});
	EXPECT_EQ(decide(e, rules).stosb.min, 0u);
	// The same rule for rep movsb, a window open to any size.
	rules.movsb_policy = Window{2112, Window::open};
	e.movsb = rows({{2048, 1.0}, {4096, 1.01}, {1 << 20, 0.99}});
	p = decide(e, rules);
	EXPECT_TRUE(p.movsb_kept);
	EXPECT_EQ(profile_string(p).substr(0, 48), "rep_movsb_threshold=2112:rep_movsb_stop=inf:rep_");
	e.movsb[1].rep[aligned] = t(110);
	EXPECT_EQ(decide(e, rules).movsb.min, 0u);
}
