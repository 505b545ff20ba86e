// No lost wake-up: ping-pong, one waker with many waiters, random delays
// between the store and the wake; for each mechanism this CPU has.
#include <climits>
#include <random>
#include "common.h"

using namespace idle_test;

namespace {

class Handoff : public ::testing::TestWithParam<Mechanism> {
protected:
	void SetUp() override
	{
		std::string why = lacks(GetParam().policy);
		if (!why.empty())
			GTEST_SKIP() << why;
	}
};

// Waits until *w != v with the mechanism; returns the value seen.
uint32_t wait_change(const IdlePolicy &p, uint32_t *w, uint32_t v, uint64_t *spurious = nullptr)
{
	for (;;) {
		uint32_t cur = ld(w);
		if (cur != v)
			return cur;
		int r = idle_wait(w, v, -1, p);
		EXPECT_EQ(r, 0);
		if (spurious && ld(w) == v)
			++*spurious;
	}
}

// Two threads hand a token back and forth: the word counts the handoffs;
// thread A moves it from even to odd, thread B from odd to even. Ends at
// `target` handoffs or after `cap_s` seconds (the count reached is
// printed). Every handoff is one store, one wake and one wait; a lost
// wake-up leaves both threads asleep and the watchdog fails the run.
void pingpong(const IdlePolicy &p, uint32_t target, double cap_s)
{
	alignas(64) static uint32_t w;
	alignas(64) static uint32_t limit;
	w = 0;
	limit = target;
	uint32_t moves[2] = {0, 0};
	auto player = [&](uint32_t parity) {
		uint32_t cur = 0;
		for (;;) {
			while (((cur = ld(&w)) & 1) != parity)
				if (idle_wait(&w, cur, -1, p) != 0)
					ADD_FAILURE() << "idle_wait returned nonzero without a timeout";
			uint32_t lim = ld(&limit);
			st(&w, cur + 1);
			idle_wake(&w, 1);
			if (cur >= lim)
				return;   // the partner sees cur + 1 >= limit and stops too
			moves[parity]++;
		}
	};
	auto t0 = Clock::now();
	std::thread a(player, 0), b(player, 1);
	// Shorten the run when it is slow (a busy machine): the players read
	// the limit after each wait, so lowering it never strands one.
	while (ld(&w) < target + 1 && secs_since(t0) < cap_s)
		std::this_thread::sleep_for(std::chrono::milliseconds(5));
	uint32_t now = ld(&w);
	if (now < target)
		st(&limit, now);
	a.join();
	b.join();
	uint32_t done = moves[0] + moves[1];
	EXPECT_GE(ld(&w), done);
	EXPECT_LE(moves[0] > moves[1] ? moves[0] - moves[1] : moves[1] - moves[0], 1u);
	double s = secs_since(t0);
	std::printf("  %u handoffs in %.2f s (%.0f ns each)%s\n", done, s, s * 1e9 / (done ? done : 1),
		    done < target ? " (time cap reached)" : "");
	EXPECT_GE(done, target < 200 ? target : 200u) << "too few handoffs to mean anything";
}

TEST_P(Handoff, PingPong)
{
	Watchdog wd(30, current_test());
	// 10^6 handoffs where a stage watches memory; through the futex alone
	// each costs two system calls and a context switch (10-30 us on a
	// 2-core VM), so 10^5 there. Either way at most 3 s: a busy machine
	// ends it early (the count reached is printed).
	pingpong(GetParam().policy, GetParam().spins ? 1000000 : 100000, 3.0);
}

// Whether the mechanism ever sleeps (else its waiters only spin, and more
// spinners than CPUs make every round cost scheduler time slices).
bool sleeps(const IdlePolicy &p)
{
	for (uint32_t i = 0; i < p.nstages; i++)
		if (p.stages[i] == Stage::futex)
			return true;
	return false;
}

// One waker, many waiters, wake-all: every round stores a new generation
// and wakes INT_MAX; each waiter reports arrival through a second word
// (also waited on with the same mechanism). 400 rounds or 3 s.
TEST_P(Handoff, WakeAll)
{
	Watchdog wd(30, current_test());
	const IdlePolicy p = GetParam().policy;
	const int nwaiters = sleeps(p) ? 6 : 2;
	const uint32_t rounds = 400;
	alignas(64) static uint32_t gen, arrived, quit;
	gen = arrived = quit = 0;
	std::vector<std::thread> ts;
	for (int i = 0; i < nwaiters; i++)
		ts.emplace_back([&] {
			for (uint32_t g = 0;; g++) {
				wait_change(p, &gen, g);
				if (ld(&quit))
					return;
				__atomic_fetch_add(&arrived, 1, __ATOMIC_ACQ_REL);
				idle_wake(&arrived, INT_MAX);
			}
		});
	auto t0 = Clock::now();
	uint32_t g = 0;
	for (; g < rounds && (g < 20 || secs_since(t0) < 3.0); g++) {
		st(&gen, g + 1);
		idle_wake(&gen, INT_MAX);
		uint32_t want = (g + 1) * nwaiters, a;
		while ((a = ld(&arrived)) < want)
			idle_wait(&arrived, a, -1, p);
		ASSERT_EQ(ld(&arrived), want);
	}
	st(&quit, 1);
	st(&gen, g + 1);
	idle_wake(&gen, INT_MAX);
	for (auto &t : ts)
		t.join();
	std::printf("  %u rounds x %d waiters in %.2f s\n", g, nwaiters, secs_since(t0));
}

// Wakes with a count: with every waiter asleep in the futex, wake(1) wakes
// at most one and wake(2) at most two; all of them get out.
TEST_P(Handoff, WakeCount)
{
	Watchdog wd(30, current_test());
	const IdlePolicy p = GetParam().policy;
	constexpr int nwaiters = 5;
	alignas(64) static uint32_t word, out;
	for (int count : {1, 2}) {
		word = out = 0;
		std::vector<std::thread> ts;
		for (int i = 0; i < nwaiters; i++)
			ts.emplace_back([&] {
				wait_change(p, &word, 0);
				__atomic_fetch_add(&out, 1, __ATOMIC_ACQ_REL);
			});
		// Until everyone who will sleep is asleep (or 200 ms): the spin and
		// monitor stages end within their budgets.
		auto t0 = Clock::now();
		while (sleeps(p) && idle::sleepers(&word) < nwaiters && secs_since(t0) < 0.2)
			std::this_thread::sleep_for(std::chrono::microseconds(200));
		st(&word, 1);
		int woken = 0;
		while (ld(&out) < nwaiters) {
			int r = idle_wake(&word, count);
			ASSERT_GE(r, 0);
			ASSERT_LE(r, count);
			woken += r;
			std::this_thread::sleep_for(std::chrono::microseconds(100));
		}
		for (auto &t : ts)
			t.join();
		EXPECT_LE(woken, nwaiters);
		EXPECT_EQ(idle::sleepers(&word), 0u);
	}
}

// Random delays before the store and between the store and the wake, so
// that the store lands while the waiter spins, while it moves between
// stages, and while it sleeps, and the wake comes late.
TEST_P(Handoff, RandomDelays)
{
	Watchdog wd(30, current_test());
	IdlePolicy p = GetParam().policy;
	alignas(64) static uint32_t w, ack, quit;
	w = ack = quit = 0;
	std::thread waiter([&] {
		for (uint32_t v = 0;; v++) {
			wait_change(p, &w, v);
			if (ld(&quit))
				return;
			st(&ack, v + 1);
			idle_wake(&ack, 1);
		}
	});
	std::mt19937 rng(12345);
	auto busy = [](uint32_t ns) {
		auto t = Clock::now();
		while (ns_since(t) < ns)
			idle::cpu_relax();
	};
	auto t0 = Clock::now();
	uint32_t v = 0;
	for (; v < 20000 && (v < 200 || secs_since(t0) < 3.0); v++) {
		uint32_t a;
		while ((a = ld(&ack)) != v)
			idle_wait(&ack, a, -1, p);
		busy(rng() % 30000);             // 0-30 us before the store
		st(&w, v + 1);
		if (rng() % 4 == 0)
			busy(rng() % 30000);     // sometimes late with the wake
		idle_wake(&w, 1);
	}
	uint32_t a;
	while ((a = ld(&ack)) != v)
		idle_wait(&ack, a, -1, p);
	st(&quit, 1);
	st(&w, v + 1);
	idle_wake(&w, 1);
	waiter.join();
	EXPECT_EQ(ld(&ack), v);
	std::printf("  %u rounds in %.2f s\n", v, secs_since(t0));
}

INSTANTIATE_TEST_SUITE_P(Idle, Handoff, ::testing::ValuesIn(mechanisms()), mech_name);

// The stage functions called directly, paired with idle_wake: the futex
// stage sleeps until the wake (and its waiter count returns to zero); the
// spin stage sees the store without any wake.
TEST(HandoffStage, FutexStageDirect)
{
	Watchdog wd(30, current_test());
	alignas(64) static uint32_t w;
	w = 0;
	for (int round = 0; round < 200; round++) {
		std::thread t([&] {
			while (ld(&w) == uint32_t(round))
				EXPECT_EQ(idle::stage_futex(&w, round, -1), 0);
		});
		if (round % 2)
			std::this_thread::sleep_for(std::chrono::microseconds(50));
		st(&w, round + 1);
		idle_wake(&w, 1);
		t.join();
	}
	EXPECT_EQ(idle::sleepers(&w), 0u);
}

TEST(HandoffStage, SpinStageDirect)
{
	Watchdog wd(30, current_test());
	alignas(64) static uint32_t w;
	w = 0;
	for (int round = 0; round < 200; round++) {
		std::thread t([&] { EXPECT_EQ(idle::stage_spin(&w, round, ~uint64_t(0)), 0); });
		st(&w, round + 1);
		t.join();
	}
}

} // namespace
