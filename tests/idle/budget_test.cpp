// The learning spin budget's rule (src/idle/budget.h) as a pure function,
// driven by scripted wait sequences; and the table that keeps it per
// address, through idle_wait.
#include <vector>
#include "common.h"
#include "idle/budget.h"

using namespace idle_test;
using idle::SpinPlan;
using idle::SpinState;
using idle::WaitOutcome;

namespace {

constexpr uint32_t cap = 15000;

// Runs a script of wait times (ns) through plan -> learn, as wait_on does,
// and returns the budget each wait spun for.
struct Replay {
	SpinState s{0, 0, false};
	std::vector<uint32_t> spins;
	std::vector<bool> probes;
	void wait(uint64_t t_ns, bool timed_out = false)
	{
		SpinPlan p = idle::spin_plan(s, cap);
		spins.push_back(p.spin_ns);
		probes.push_back(p.probe);
		s = idle::spin_learn(s, p, WaitOutcome{t_ns, timed_out}, cap);
	}
	void waits(int n, uint64_t t_ns)
	{
		for (int i = 0; i < n; i++)
			wait(t_ns);
	}
};

TEST(IdleBudget, FirstWaitSpinsTheCap)
{
	SpinPlan p = idle::spin_plan(SpinState{0, 0, false}, cap);
	EXPECT_EQ(p.spin_ns, cap);
	EXPECT_FALSE(p.probe);
	// A budget above a cap lowered since (another policy): the cap.
	EXPECT_EQ(idle::spin_plan(SpinState{40000, 0, true}, cap).spin_ns, cap);
}

TEST(IdleBudget, WaitsCaughtBySpinKeepTheBudget)
{
	Replay r;
	r.waits(100, 1000);   // 1 us handoffs
	for (uint32_t s : r.spins)
		EXPECT_EQ(s, cap);
	EXPECT_EQ(r.s.budget_ns, cap);
	EXPECT_EQ(r.s.since_probe, 0);
}

TEST(IdleBudget, LongWaitsHalveDownToZero)
{
	Replay r;
	r.waits(7, 200000);   // a 200 us trickle: no spin catches it
	// 15000 -> 7500 -> 3750 -> 1875 -> 937 -> 468 -> 0 (below 250 after 234)
	std::vector<uint32_t> want = {15000, 7500, 3750, 1875, 937, 468, 234};
	for (size_t i = 0; i < want.size(); i++)
		EXPECT_EQ(r.spins[i], want[i] < idle::shrink_floor_ns ? 0u : want[i]) << "wait " << i;
	EXPECT_EQ(r.s.budget_ns, 0u);
}

TEST(IdleBudget, WaitJustAfterTheWindowDoublesIt)
{
	SpinState s{2000, 0, true};
	SpinPlan p = idle::spin_plan(s, cap);
	ASSERT_EQ(p.spin_ns, 2000u);
	// Ended at 2.5 us: after the spin, inside the cap: 2t.
	SpinState n = idle::spin_learn(s, p, WaitOutcome{2500, false}, cap);
	EXPECT_EQ(n.budget_ns, 5000u);
	// Just after it: still more than double.
	n = idle::spin_learn(s, p, WaitOutcome{2001, false}, cap);
	EXPECT_EQ(n.budget_ns, 4002u);
	// At the budget exactly: caught, kept.
	n = idle::spin_learn(s, p, WaitOutcome{2000, false}, cap);
	EXPECT_EQ(n.budget_ns, 2000u);
	EXPECT_EQ(n.since_probe, 1);
	// From 0: at least grow_min_ns.
	n = idle::spin_learn(SpinState{0, 0, true}, SpinPlan{0, false}, WaitOutcome{100, false}, cap);
	EXPECT_EQ(n.budget_ns, idle::grow_min_ns);
	// Never above the cap.
	n = idle::spin_learn(SpinState{12000, 0, true}, SpinPlan{12000, false}, WaitOutcome{14000, false}, cap);
	EXPECT_EQ(n.budget_ns, cap);
}

// A 20 us trickle with a 15 us cap: every wait runs past the cap, so the
// spin falls to 0 and stays there but for one probe in probe_every waits;
// the CPU spent spinning is a small fraction of the fixed budget's.
TEST(IdleBudget, TrickleJustLongerThanTheCapStopsSpinning)
{
	Replay r;
	r.waits(1000, 20000);
	uint64_t spun = 0, probes = 0;
	for (size_t i = 0; i < r.spins.size(); i++) {
		spun += r.spins[i];
		probes += r.probes[i];
		if (i >= 7 && !r.probes[i]) {
			EXPECT_EQ(r.spins[i], 0u) << "wait " << i;
		}
	}
	EXPECT_NEAR(double(probes), 1000.0 / idle::probe_every, 2);
	// Per wait: about cap / probe_every instead of cap.
	EXPECT_LT(double(spun) / 1000, 1.5 * cap / idle::probe_every + 100);
}

// Short waits after a long phase: a sleep's time includes the kernel's
// wake-up (here 40 us, over the cap), so only the probes can tell; the
// first probe that ends in its spin regrows the budget, and it stays.
TEST(IdleBudget, ProbeRelearnsShortWaits)
{
	Replay r;
	r.waits(10, 200000);
	ASSERT_EQ(r.s.budget_ns, 0u);
	// Waits of 1 us: each non-probe wait sleeps and is seen as 41 us.
	size_t first_probe = 0;
	for (int i = 0; i < 2 * idle::probe_every && !first_probe; i++) {
		SpinPlan p = idle::spin_plan(r.s, cap);
		uint64_t t = p.spin_ns >= 1000 ? 1000 : 41000;
		r.wait(t);
		if (p.probe)
			first_probe = r.spins.size();
	}
	ASSERT_NE(first_probe, 0u) << "no probe within " << 2 * idle::probe_every << " waits";
	EXPECT_EQ(r.s.budget_ns, 2000u);   // 2t
	// From now on the spin catches every 1 us wait and keeps its budget.
	for (int i = 0; i < 100; i++) {
		SpinPlan p = idle::spin_plan(r.s, cap);
		ASSERT_GE(p.spin_ns, 1000u);
		r.wait(1000);
	}
	EXPECT_EQ(r.s.budget_ns, 2000u);
}

// A timeout shorter than the cap says nothing about when the word would
// have changed; one longer than the cap is a long wait.
TEST(IdleBudget, Timeouts)
{
	SpinState s{4000, 3, true};
	SpinPlan p = idle::spin_plan(s, cap);
	SpinState n = idle::spin_learn(s, p, WaitOutcome{9000, true}, cap);
	EXPECT_EQ(n.budget_ns, 4000u);
	EXPECT_EQ(n.since_probe, 4);
	n = idle::spin_learn(s, p, WaitOutcome{1000000, true}, cap);
	EXPECT_EQ(n.budget_ns, 2000u);
}

// A mixed script: bursts of 1 us handoffs between 1 ms gaps. The 1 ms gap
// halves the budget; the next short wait that sleeps but ends within the
// cap (a fast wake-up) doubles it back. Budget never leaves 0..cap.
TEST(IdleBudget, MixedScriptStaysInRange)
{
	Replay r;
	uint32_t lcg = 1;
	for (int i = 0; i < 5000; i++) {
		lcg = lcg * 1664525 + 1013904223;
		uint64_t t = (lcg >> 24) < 200 ? 1000 : (lcg >> 24) < 240 ? 8000 : 1000000;
		r.wait(t, (lcg & 0xff) == 0);
		ASSERT_LE(r.s.budget_ns, cap);
		ASSERT_LT(r.s.since_probe, idle::probe_every);
	}
}

// The table: idle_wait learns per address (a hashed, tagged entry), so a
// word with long waits does not shorten the spin of a word with short ones.
TEST(IdleBudget, TableKeepsAddressesApart)
{
	Watchdog wd(30, current_test());
	const IdlePolicy p = make_policy({Stage::spin, Stage::futex}, 20000);
	idle::forget_learnt();
	// Two addresses of one bucket: only the tag keeps them apart.
	alignas(64) static uint32_t words[4096];
	uint32_t &slow = words[0];
	uint32_t *other = nullptr;
	for (uint32_t &w : words)
		if (&w != &slow && idle::learn_bucket(&w) == idle::learn_bucket(&slow)) {
			other = &w;
			break;
		}
	ASSERT_NE(other, nullptr) << "no second address in the bucket of the first among 4096 words";
	uint32_t &fast = *other;
	slow = fast = 1;
	EXPECT_FALSE(idle::learnt(&slow).known);
	// Timed-out waits of 1 ms on `slow`: each halves its budget.
	for (int i = 0; i < 8; i++)
		ASSERT_EQ(idle_wait(&slow, 1, 1000000, p), ETIMEDOUT);
	SpinState s = idle::learnt(&slow);
	EXPECT_TRUE(s.known);
	EXPECT_EQ(s.budget_ns, 0u);
	// `fast` has its own entry: unknown, so the cap.
	SpinState f = idle::learnt(&fast);
	EXPECT_TRUE(!f.known || f.budget_ns == 20000) << f.budget_ns;
	// A change seen at once (the word already differs) is no wait and
	// teaches nothing.
	EXPECT_EQ(idle_wait(&slow, 2, -1, p), 0);
	EXPECT_EQ(idle::learnt(&slow).budget_ns, 0u);
	// A policy that never spins learns nothing.
	idle::forget_learnt();
	ASSERT_EQ(idle_wait(&slow, 1, 100000, make_policy({Stage::futex})), ETIMEDOUT);
	EXPECT_FALSE(idle::learnt(&slow).known);
}

} // namespace
