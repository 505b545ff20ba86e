// Timeouts, argument checks, a value that already differs, signals during
// a sleep, and the idle clock's frequency.
#include <cerrno>
#include <csignal>
#include <pthread.h>
#include <sys/resource.h>
#include "common.h"

using namespace idle_test;

namespace {

class Timeout : public ::testing::TestWithParam<Mechanism> {
protected:
	void SetUp() override
	{
		std::string why = lacks(GetParam().policy);
		if (!why.empty())
			GTEST_SKIP() << why;
	}
};

// A wait that times out never returns before its timeout (measured from
// before the call, so the check can only be lenient in the library's
// favour by the call overhead), and on a quiet machine not much after:
// the upper bound is loose because CI shares two cores.
TEST_P(Timeout, ReturnsETIMEDOUTNoEarlier)
{
	Watchdog wd(30, current_test());
	const IdlePolicy p = GetParam().policy;
	alignas(4) uint32_t w = 7;
	for (int64_t t : {int64_t(1), int64_t(1000), int64_t(15000), int64_t(25000), int64_t(100000),
			  int64_t(1000000), int64_t(3000000)}) {
		for (int rep = 0; rep < 5; rep++) {
			auto t0 = Clock::now();
			int r = idle_wait(&w, 7, t, p);
			int64_t el = ns_since(t0);
			ASSERT_EQ(r, ETIMEDOUT) << "timeout " << t << " ns";
			ASSERT_GE(el, t) << "returned " << (t - el) << " ns early, timeout " << t << " ns";
			EXPECT_LT(el, t + 50000000) << "timeout " << t << " ns took " << el << " ns";
		}
	}
}

TEST_P(Timeout, OneMillisecond)
{
	Watchdog wd(30, current_test());
	alignas(4) uint32_t w = 0;
	int64_t best = INT64_MAX;
	for (int rep = 0; rep < 10; rep++) {
		auto t0 = Clock::now();
		ASSERT_EQ(idle_wait(&w, 0, 1000000, GetParam().policy), ETIMEDOUT);
		int64_t el = ns_since(t0);
		ASSERT_GE(el, 1000000);
		EXPECT_LT(el, 50000000);
		best = std::min(best, el);
	}
	std::printf("  1 ms timeout: fastest return after %.3f ms\n", best / 1e6);
	// On an idle machine a few ms; the best of ten must be that (with room
	// for a CI machine whose two cores are busy).
	EXPECT_LT(best, 10000000);
}

// This thread's voluntary context switches: one for every sleep in the
// kernel (a preemption is involuntary and not counted).
long voluntary_switches()
{
	rusage u{};
	getrusage(RUSAGE_THREAD, &u);
	return u.ru_nvcsw;
}

// How many of 20 waits of 30 us slept, each given three tries: a wait
// whose deadline has passed when it reaches the futex returns without
// sleeping, correctly, and a vCPU can lose 30 us anywhere before that. On
// the Zen 5 guest, with one try each, one wait in 20 did not sleep in 9
// of 200 runs of these tests, and still in 3 of 200 with a first wait
// left uncounted (its page faults, 10-14 us each there); with three
// tries, in none of 300. A policy that waits awake sleeps in no try.
int waits_that_slept(const IdlePolicy &p)
{
	alignas(4) uint32_t w = 3;
	int slept = 0;
	for (int rep = 0; rep < 20; rep++)
		for (int attempt = 0; attempt < 3; attempt++) {
			long before = voluntary_switches();
			EXPECT_EQ(idle_wait(&w, 3, 30000, p), ETIMEDOUT);
			if (voluntary_switches() > before) {
				slept++;
				break;
			}
		}
	return slept;
}

// A timeout shorter than the shortest sleep (50 us: the kernel's default
// timer slack, which a sleep may overshoot by) is waited without sleeping,
// so that it ends when asked, by a policy that waits awake at all (a
// futex-only one always sleeps); a longer one sleeps where the policy has
// a futex stage.
TEST_P(Timeout, ShortTimeoutsDoNotSleep)
{
	Watchdog wd(30, current_test());
	const IdlePolicy p = GetParam().policy;
	bool futex = p.nstages == 0, awake = false;
	for (uint32_t i = 0; i < p.nstages; i++) {
		futex |= p.stages[i] == Stage::futex;
		awake |= !futex && (p.stages[i] == Stage::spin ? p.spin_ns : p.monitor_ns) > 0;
	}
	alignas(4) uint32_t w = 3;
	if (awake) {
		long before = voluntary_switches();
		for (int rep = 0; rep < 20; rep++)
			ASSERT_EQ(idle_wait(&w, 3, 30000, p), ETIMEDOUT);
		EXPECT_EQ(voluntary_switches() - before, 0) << "a 30 us timeout slept";
	} else {
		EXPECT_EQ(waits_that_slept(p), 20) << "a futex-only policy waited awake";
	}
	if (!futex)
		return;
	long before = voluntary_switches();
	ASSERT_EQ(idle_wait(&w, 3, 5000000, p), ETIMEDOUT);
	EXPECT_GE(voluntary_switches() - before, 1) << "a 5 ms timeout never slept";
}

// A policy whose stages before the futex have no budget never waits
// awake, not even for a near deadline.
TEST(TimeoutShort, NoBudgetSleeps)
{
	Watchdog wd(30, current_test());
	EXPECT_EQ(waits_that_slept(make_policy({Stage::spin, Stage::futex}, 0)), 20) << "a spin budget of 0 waited awake";
}

TEST_P(Timeout, ZeroTimeoutAndDifferingValue)
{
	const IdlePolicy p = GetParam().policy;
	alignas(4) uint32_t w = 5;
	EXPECT_EQ(idle_wait(&w, 5, 0, p), ETIMEDOUT);
	// A value that already differs: 0 at once, whatever the timeout.
	for (int64_t t : {int64_t(-1), int64_t(0), int64_t(1000000000), INT64_MAX}) {
		auto t0 = Clock::now();
		EXPECT_EQ(idle_wait(&w, 6, t, p), 0);
		EXPECT_LT(ns_since(t0), 1000000);
	}
}

// A change during a timed wait ends it with 0, long before the timeout.
TEST_P(Timeout, ChangeBeforeTimeout)
{
	Watchdog wd(30, current_test());
	const IdlePolicy p = GetParam().policy;
	alignas(64) static uint32_t w;
	for (int delay_us : {0, 5, 50, 500, 3000}) {
		w = 0;
		std::thread t([&] {
			std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
			st(&w, 1);
			idle_wake(&w, 1);
		});
		auto t0 = Clock::now();
		int r;
		while ((r = idle_wait(&w, 0, 10000000000, p)) == 0 && ld(&w) == 0)
			;   // a spurious wake
		EXPECT_EQ(r, 0);
		EXPECT_LT(secs_since(t0), 5.0);
		t.join();
	}
}

INSTANTIATE_TEST_SUITE_P(Idle, Timeout, ::testing::ValuesIn(mechanisms()), mech_name);

TEST(TimeoutArgs, Einval)
{
	IdlePolicy p = bound_policy();
	alignas(8) uint32_t w[2] = {0, 0};
	EXPECT_EQ(idle_wait(nullptr, 0, -1, p), EINVAL);
	EXPECT_EQ(idle_wait(nullptr, 0, 1000, p), EINVAL);
	const uint32_t *mis = reinterpret_cast<const uint32_t *>(reinterpret_cast<const char *>(w) + 1);
	EXPECT_EQ(idle_wait(mis, 0, -1, p), EINVAL);
	mis = reinterpret_cast<const uint32_t *>(reinterpret_cast<const char *>(w) + 2);
	EXPECT_EQ(idle_wait(mis, 0, 0, p), EINVAL);
	// A wake on a bad address wakes nobody, does not fault, and says so.
	EXPECT_EQ(idle_wake(nullptr, 1), -EINVAL);
	EXPECT_EQ(idle_wake(reinterpret_cast<uint32_t *>(reinterpret_cast<char *>(w) + 3), INT32_MAX), -EINVAL);
	EXPECT_EQ(idle_wake(&w[0], 0), 0);
}

// The stages on their own: a deadline already past, a value that differs.
TEST(TimeoutStage, SpinAndFutexStages)
{
	alignas(4) uint32_t w = 3;
	EXPECT_EQ(idle::stage_spin(&w, 3, 0), ETIMEDOUT);
	EXPECT_EQ(idle::stage_spin(&w, 4, ~uint64_t(0)), 0);
	uint64_t t0 = idle::clock_now();
	EXPECT_EQ(idle::stage_spin(&w, 3, t0 + idle::ticks_from_ns(200000)), ETIMEDOUT);
	EXPECT_GE(idle::clock_now() - t0, idle::ticks_from_ns(200000));
	EXPECT_EQ(idle::stage_futex(&w, 3, 0), ETIMEDOUT);   // 1970 is past
	EXPECT_EQ(idle::stage_futex(&w, 4, -1), 0);           // EAGAIN: differs
	int64_t m = idle::mono_now_ns();
	EXPECT_EQ(idle::stage_futex(&w, 3, m + 2000000), ETIMEDOUT);
	EXPECT_GE(idle::mono_now_ns(), m + 2000000);
	EXPECT_EQ(idle::sleepers(&w), 0u);
}

// The monitor stages where the CPU has them: past deadline, differing
// value, and a wait longer than the OS's cap on one UMWAIT (100000 TSC
// ticks by default), which the stage must re-arm through.
TEST(TimeoutStage, MonitorStages)
{
	const Cpu &c = host();
	alignas(64) static uint32_t w;
	w = 1;
	int ran = 0;
#if defined(__x86_64__)
	for (Stage s : {Stage::umwait, Stage::tpause, Stage::mwaitx}) {
		if (!stage_runs_on(s, c)) {
			std::printf("  skipped %s\n", lacks(make_policy({s})).c_str());
			continue;
		}
		auto run = [&](uint32_t exp, uint64_t dl, bool c01) {
			switch (s) {
			case Stage::umwait: return idle::stage_umwait(&w, exp, dl, c01);
			case Stage::tpause: return idle::stage_tpause(&w, exp, dl, c01);
			default: return idle::stage_mwaitx(&w, exp, dl, c01);
			}
		};
		for (bool c01 : {true, false}) {
			EXPECT_EQ(run(1, 0, c01), ETIMEDOUT) << stage_name(s);
			EXPECT_EQ(run(2, ~uint64_t(0), c01), 0) << stage_name(s);
			uint64_t t0 = idle::clock_now(), len = idle::ticks_from_ns(5000000);
			EXPECT_EQ(run(1, t0 + len, c01), ETIMEDOUT) << stage_name(s);
			EXPECT_GE(idle::clock_now() - t0, len) << stage_name(s);
		}
		ran++;
	}
#else
	(void)c;
	(void)w;
#endif
	if (!ran)
		GTEST_SKIP() << "umwait, tpause: CPU lacks waitpkg; mwaitx: CPU lacks monitorx";
}

// Signals during a futex sleep: the wait neither returns early with
// ETIMEDOUT nor reports the interruption; it goes on to the same deadline.
void on_usr1(int) {}

TEST(TimeoutSignal, SleepSurvivesSignals)
{
	Watchdog wd(30, current_test());
	struct sigaction sa = {};
	sa.sa_handler = on_usr1;   // no SA_RESTART: the futex returns EINTR
	sigaction(SIGUSR1, &sa, nullptr);
	alignas(64) static uint32_t w;
	w = 0;
	std::atomic<bool> in{false};
	int r = -1;
	int64_t el = 0;
	IdlePolicy p = make_policy({Stage::futex});
	std::thread t([&] {
		in = true;
		auto t0 = Clock::now();
		r = idle_wait(&w, 0, 30000000, p);
		el = ns_since(t0);
	});
	pthread_t h = t.native_handle();
	while (!in)
		std::this_thread::yield();
	for (int i = 0; i < 5; i++) {
		std::this_thread::sleep_for(std::chrono::milliseconds(3));
		pthread_kill(h, SIGUSR1);
	}
	t.join();
	EXPECT_EQ(r, ETIMEDOUT);
	EXPECT_GE(el, 30000000);
	// And without a timeout, signals do not end the wait; the store does.
	std::thread u([&] { r = idle_wait(&w, 0, -1, p); });
	h = u.native_handle();
	for (int i = 0; i < 5; i++) {
		std::this_thread::sleep_for(std::chrono::milliseconds(2));
		pthread_kill(h, SIGUSR1);
	}
	st(&w, 1);
	idle_wake(&w, 1);
	u.join();
	EXPECT_EQ(r, 0);
	signal(SIGUSR1, SIG_DFL);
}

// The idle clock's frequency against CLOCK_MONOTONIC over 100 ms; the
// conversions round as documented and saturate.
TEST(IdleClock, Frequency)
{
	idle::ClockSource src;
	uint64_t hz = idle::clock_hz(&src);
	// A (steady_clock, idle clock) pair read within 20 us of each other, so
	// a preemption between the two reads cannot skew the comparison.
	auto pair = [](Clock::time_point *s, uint64_t *t) {
		for (int i = 0; i < 1000; i++) {
			auto a = Clock::now();
			*t = idle::clock_now();
			auto b = Clock::now();
			*s = a + (b - a) / 2;
			if (b - a < std::chrono::microseconds(20))
				return;
		}
	};
	Clock::time_point s0, s1;
	uint64_t t0, t1;
	pair(&s0, &t0);
	std::this_thread::sleep_for(std::chrono::milliseconds(100));
	pair(&s1, &t1);
	double ns = double(std::chrono::duration_cast<std::chrono::nanoseconds>(s1 - s0).count());
	double measured = double(t1 - t0) * 1e9 / ns;
	std::printf("  idle clock: %.3f MHz (%s), measured over 100 ms: %.3f MHz\n", hz / 1e6,
		    idle::clock_source_name(src), measured / 1e6);
	EXPECT_NEAR(double(hz), measured, measured * 0.01);
	EXPECT_NE(src, idle::ClockSource::unknown);
}

TEST(IdleClock, Conversions)
{
	for (uint64_t ns : {uint64_t(0), uint64_t(1), uint64_t(999), uint64_t(20000), uint64_t(1000000000),
			    uint64_t(86400) * 1000000000}) {
		uint64_t t = idle::ticks_from_ns(ns);
		uint64_t back = idle::ns_from_ticks(t);
		// Up, then down: within a tick and the fixed point's rounding.
		double tol = 2 + 1e9 / double(idle::clock_hz()) + double(ns) * 1e-8;
		EXPECT_GE(double(back) + tol, double(ns)) << ns;
		EXPECT_LE(double(back), double(ns) + tol) << ns;
	}
	// Saturates where ticks are finer than ns (TSC); monotonic anyway.
	if (idle::clock_hz() > 1000000000) {
		EXPECT_EQ(idle::ticks_from_ns(~uint64_t(0)), ~uint64_t(0));
	}
	EXPECT_GE(idle::ticks_from_ns(~uint64_t(0)), idle::ticks_from_ns(~uint64_t(0) / 2));
	EXPECT_GT(idle::ticks_from_ns(1), 0u);
}

} // namespace
