// The WFE and WFET idle stages called directly (src/arch/aarch64/idle_wfe.cpp):
// deadlines in the past and future, a value that already differs, and
// stores from another thread - to the word (must end the wait, also when it
// lands between the LDAXR and the WFE) and to a neighbour in the same
// reservation granule (a wake-up the stage must treat as spurious). Every
// wait carries a finite deadline, so a missed store fails as ETIMEDOUT
// instead of hanging. Under qemu-user WFE does nothing and this checks the
// loop's logic only; WFET is skipped by name where HWCAP2_WFXT is absent
// (qemu-aarch64 7.2).
#include <gtest/gtest.h>
#include <errno.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include "idle/stages.h"
#include "probe/cpu.h"
#include "select/plan.h"

using namespace uarch;

namespace {

Cpu host_cpu()
{
	Cpu c;
	probe_host(&c, getauxval(AT_HWCAP), getauxval(AT_HWCAP2));
	return c;
}

using StageFn = int (*)(const uint32_t *, uint32_t, uint64_t);

struct StageCase {
	const char *name;
	Stage stage;
	StageFn fn;
};

const StageCase cases[] = {
	{"wfe", Stage::wfe, idle::stage_wfe},
	{"wfet", Stage::wfet, idle::stage_wfet},
};

void PrintTo(const StageCase &c, std::ostream *os) { *os << c.name; }

int g_ran, g_skipped;

class WfeTest : public testing::TestWithParam<StageCase> {
protected:
	void SetUp() override
	{
		if (!stage_runs_on(GetParam().stage, host_cpu())) {
			g_skipped++;
			GTEST_SKIP() << GetParam().name
				     << ": CPU lacks wfxt (HWCAP2_WFXT; qemu-aarch64 7.2 does not implement FEAT_WFxT)";
		}
		g_ran++;
	}
	int wait(const uint32_t *a, uint32_t exp, uint64_t dl) { return GetParam().fn(a, exp, dl); }
};

uint64_t after_ns(uint64_t ns) { return idle::clock_now() + idle::ticks_from_ns(ns); }

TEST_P(WfeTest, DeadlinePassedOrValueDiffers)
{
	alignas(64) static uint32_t w;
	w = 1;
	EXPECT_EQ(wait(&w, 1, 0), ETIMEDOUT);
	EXPECT_EQ(wait(&w, 1, idle::clock_now()), ETIMEDOUT);
	EXPECT_EQ(wait(&w, 2, ~uint64_t(0)), 0);
	EXPECT_EQ(wait(&w, 0, 0), 0);   // a differing value wins over a passed deadline
}

// Ends at its deadline (the idle clock says so), not before, and not much
// after (the event stream, WFET's own timeout, or qemu's no-op WFE).
TEST_P(WfeTest, TimesOut)
{
	alignas(64) static uint32_t w;
	w = 7;
	for (uint64_t ns : {uint64_t(100000), uint64_t(5000000)}) {
		uint64_t t0 = idle::clock_now(), len = idle::ticks_from_ns(ns);
		auto s0 = std::chrono::steady_clock::now();
		EXPECT_EQ(wait(&w, 7, t0 + len), ETIMEDOUT);
		EXPECT_GE(idle::clock_now() - t0, len);
		EXPECT_LT(std::chrono::steady_clock::now() - s0, std::chrono::seconds(5)) << ns << " ns";
	}
}

// Another thread stores to the word after a random delay (0-300 us): the
// stage returns 0, and sees the new value (LDAXR is an acquire load, so the
// data published before the store is visible too).
TEST_P(WfeTest, StoreEndsTheWait)
{
	alignas(64) static uint32_t w;
	alignas(64) static uint64_t payload;
	w = 0;
	payload = 0;
	std::atomic<uint32_t> go{0};
	const uint32_t rounds = 100;
	int timeouts = 0, stale = 0;
	std::thread waiter([&] {
		for (uint32_t v = 0; v < rounds; v++) {
			go.store(v + 1, std::memory_order_release);
			if (wait(&w, v, after_ns(10000000000ull)) != 0)
				timeouts++;
			else if (__atomic_load_n(&payload, __ATOMIC_RELAXED) != v + 1)
				stale++;
			while (__atomic_load_n(&w, __ATOMIC_ACQUIRE) == v)   // after a timeout
				idle::cpu_relax();
		}
	});
	std::mt19937 rng(6);
	for (uint32_t v = 0; v < rounds; v++) {
		while (go.load(std::memory_order_acquire) != v + 1)
			idle::cpu_relax();
		auto t = std::chrono::steady_clock::now();
		auto delay = std::chrono::nanoseconds(rng() % 300000);
		while (std::chrono::steady_clock::now() - t < delay)
			idle::cpu_relax();
		__atomic_store_n(&payload, v + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&w, v + 1, __ATOMIC_RELEASE);
	}
	waiter.join();
	EXPECT_EQ(timeouts, 0) << "stores slept through (each wait had 10 s)";
	EXPECT_EQ(stale, 0) << "woken, but the data stored before the word was not visible";
	std::printf("  %u handoffs\n", rounds);
}

// A store to another word of the same 64 bytes clears the monitor too: a
// spurious wake-up, after which the stage must go on waiting.
TEST_P(WfeTest, NeighbourStoreIsSpurious)
{
	alignas(64) static uint32_t words[16];
	for (auto &x : words)
		x = 0;
	std::atomic<int> result{-1};
	std::thread waiter([&] { result = wait(&words[0], 0, after_ns(10000000000ull)); });
	for (int i = 0; i < 50; i++) {
		__atomic_store_n(&words[1 + i % 15], uint32_t(i + 1), __ATOMIC_RELEASE);
		std::this_thread::sleep_for(std::chrono::microseconds(200));
	}
	EXPECT_EQ(result.load(), -1) << "the stage returned on stores to other words";
	__atomic_store_n(&words[0], 1u, __ATOMIC_RELEASE);
	waiter.join();
	EXPECT_EQ(result.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Arm64, WfeTest, testing::ValuesIn(cases),
			 [](const testing::TestParamInfo<StageCase> &i) { return std::string(i.param.name); });

struct Report : testing::Environment {
	void TearDown() override { printf("arm64 idle stages: %d test instances ran, %d skipped\n", g_ran, g_skipped); }
};
testing::Environment *const report = testing::AddGlobalTestEnvironment(new Report);

} // namespace
