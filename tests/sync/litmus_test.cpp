// The store-buffering litmus test (SB): thread A does x = 1; r1 = y, thread
// B does y = 1; r2 = x. x86-64 (TSO) lets each load pass the thread's own
// older store, so r1 == r2 == 0 happens unless a full barrier sits between
// store and load. Each uarch_smp_mb (inline, exported, each variant) must
// forbid it in at least 10^6 trials; with only a compiler barrier the same
// harness shows the reordering, which proves the harness can see it.
//
// Trials are made fast by running them in rounds: in round t both threads
// walk kSlots slot pairs (x[k], y[k], each on its own cache line), storing
// t and loading the other's slot; "saw the other's store" is slot == t, so
// nothing is reset between rounds. A two-flag barrier (done_a, done_b)
// separates rounds; a random delay before each round varies which thread
// leads and by how much.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>
#include "exported.h"
#include "dispatch/state.h"
#include "uarch.h"

namespace {

constexpr int kSlots = 64;
constexpr uint64_t kTrials = 1u << 20;   // >= 10^6
constexpr double kDeadlineS = 60;        // a busy machine may deschedule a thread

struct alignas(64) Slot {
	volatile uint64_t v;
};

struct Shared {
	Slot x[kSlots];
	Slot y[kSlots];
	alignas(64) std::atomic<uint64_t> done_a{0};
	alignas(64) std::atomic<uint64_t> done_b{0};
	alignas(64) std::atomic<uint64_t> stop_round{~uint64_t(0)};
	alignas(64) uint8_t seen_a[2][kSlots];   // by parity of the round
	alignas(64) uint8_t seen_b[2][kSlots];
};

struct Result {
	// outcome[2 * r1 + r2]: r = 1 when the load saw the other's store.
	uint64_t outcome[4] = {0, 0, 0, 0};
	uint64_t trials = 0;
	double seconds = 0;
	bool deadline = false;
	uint64_t reordered() const { return outcome[0]; }
};

void wait_at_least(const std::atomic<uint64_t> &a, uint64_t v)
{
	for (uint32_t i = 0; a.load(std::memory_order_acquire) < v; i++) {
		if (i < 2000)
			uarch_cpu_relax();
		else
			sched_yield();   // the other thread may be descheduled
	}
}

inline uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

inline void delay(uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		__asm__ __volatile__("");
}

void tally(const Shared &s, uint64_t round, Result *r)
{
	const uint8_t *a = s.seen_a[round & 1], *b = s.seen_b[round & 1];
	for (int k = 0; k < kSlots; k++)
		r->outcome[2 * a[k] + b[k]]++;
	r->trials += kSlots;
}

bool pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

// Thread A (is_a) also keeps the tally and the deadline.
template <class Barrier>
void side(bool is_a, Shared &s, Barrier barrier, uint64_t rounds, int cpu, Result *res,
	  std::chrono::steady_clock::time_point deadline)
{
	pin(cpu);
	Slot *mine = is_a ? s.x : s.y;
	Slot *theirs = is_a ? s.y : s.x;
	std::atomic<uint64_t> &my_done = is_a ? s.done_a : s.done_b;
	std::atomic<uint64_t> &their_done = is_a ? s.done_b : s.done_a;
	uint64_t rng = is_a ? 0x9e3779b97f4a7c15ull : 0xd1b54a32d192ed03ull;
	uint64_t t = 1;
	for (; t <= rounds; t++) {
		wait_at_least(their_done, t - 1);
		if (!is_a && t > s.stop_round.load(std::memory_order_acquire))
			break;
		delay(uint32_t(xorshift(&rng) % 384));
		uint8_t *seen = (is_a ? s.seen_a : s.seen_b)[t & 1];
		for (int k = 0; k < kSlots; k++) {
			mine[k].v = t;
			barrier();
			seen[k] = theirs[k].v == t;
		}
		if (is_a) {
			if (t > 1)
				tally(s, t - 1, res);
			if ((t & 255) == 0 && std::chrono::steady_clock::now() > deadline) {
				res->deadline = true;
				s.stop_round.store(t, std::memory_order_release);
				my_done.store(t, std::memory_order_release);
				break;
			}
		}
		my_done.store(t, std::memory_order_release);
	}
	if (is_a) {
		uint64_t last = t > rounds ? rounds : t;
		wait_at_least(their_done, last);
		tally(s, last, res);
	}
}

// Two CPUs this process may run on, or fewer.
std::vector<int> two_cpus()
{
	cpu_set_t set;
	std::vector<int> cpus;
	if (sched_getaffinity(0, sizeof set, &set) == 0)
		for (int i = 0; i < CPU_SETSIZE && cpus.size() < 2; i++)
			if (CPU_ISSET(i, &set))
				cpus.push_back(i);
	return cpus;
}

template <class Barrier>
Result run_sb(const char *name, Barrier barrier, uint64_t trials = kTrials)
{
	std::vector<int> cpus = two_cpus();
	auto s = std::make_unique<Shared>();
	Result res;
	uint64_t rounds = (trials + kSlots - 1) / kSlots;
	auto t0 = std::chrono::steady_clock::now();
	auto deadline = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
				     std::chrono::duration<double>(kDeadlineS));
	// Both sides on threads of their own: pinning must not stick to the
	// test's main thread.
	std::thread a([&] { side(true, *s, barrier, rounds, cpus[0], &res, deadline); });
	std::thread b([&] { side(false, *s, barrier, rounds, cpus[1], nullptr, deadline); });
	a.join();
	b.join();
	res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	printf("[ litmus   ] %-34s %8llu trials in %5.2f s on CPUs %d,%d: r1=r2=0 %llu, "
	       "r1=0/r2=1 %llu, r1=1/r2=0 %llu, r1=r2=1 %llu%s\n",
	       name, (unsigned long long)res.trials, res.seconds, cpus[0], cpus[1],
	       (unsigned long long)res.outcome[0], (unsigned long long)res.outcome[1],
	       (unsigned long long)res.outcome[2], (unsigned long long)res.outcome[3],
	       res.deadline ? " (stopped at the deadline)" : "");
	fflush(stdout);
	return res;
}

#define REQUIRE_TWO_CPUS()                                                                 \
	do {                                                                               \
		if (two_cpus().size() < 2)                                                 \
			GTEST_SKIP() << "litmus: needs two CPUs, the affinity mask has one"; \
	} while (0)

// A fenced run must be strong evidence: the full count of trials, none
// reordered, and the threads really overlapped (both saw the other's
// store: only possible when both stores precede both loads).
void expect_fenced(const Result &r)
{
	EXPECT_EQ(r.reordered(), 0u) << "r1 == r2 == 0 seen despite the full barrier";
	EXPECT_GE(r.trials, 1000000u) << "too few trials (machine too busy?)";
	EXPECT_GT(r.outcome[3], 0u) << "the two threads never overlapped";
}

struct CompilerBarrier {
	void operator()() const { __asm__ __volatile__("" ::: "memory"); }
};
struct InlineMb {
	void operator()() const { uarch_smp_mb(); }
};
struct CallMb {
	void (*fn)(void);
	void operator()() const { fn(); }
};

} // namespace

// The negative control: without a fence the store-buffering outcome
// r1 = r2 = 0 must show up, or the fenced runs below would prove nothing.
// x86-64 and arm64 hardware both allow it; on a loaded machine the two
// threads may overlap too rarely in one run, so up to three runs.
TEST(Litmus, CompilerBarrierOnlyReorders)
{
	REQUIRE_TWO_CPUS();
	Result r{};
	for (int attempt = 0; attempt < 3 && r.reordered() == 0; attempt++)
		r = run_sb("compiler barrier only", CompilerBarrier{});
	printf("[ litmus   ] reordering seen in %.4f%% of %llu trials without a fence\n",
	       100.0 * double(r.reordered()) / double(r.trials ? r.trials : 1), (unsigned long long)r.trials);
	EXPECT_GT(r.reordered(), 0u) << "no r1=r2=0 outcome without a fence: the litmus test cannot see a missing barrier";
}

TEST(Litmus, InlineSmpMb)
{
	REQUIRE_TWO_CPUS();
	expect_fenced(run_sb("uarch_smp_mb (inline)", InlineMb{}));
}

TEST(Litmus, ExportedSmpMbDlsym)
{
	REQUIRE_TWO_CPUS();
	const char *why = nullptr;
	const sync_test::Exported *e = sync_test::exported_dlsym(&why);
	ASSERT_NE(e, nullptr) << why;
	expect_fenced(run_sb("uarch_smp_mb (dlsym)", CallMb{e->smp_mb}));
}

TEST(Litmus, ExportedSmpMbNoInline)
{
	REQUIRE_TWO_CPUS();
	expect_fenced(run_sb("uarch_smp_mb (UARCH_NO_INLINE)", CallMb{sync_test::exported_noinline().smp_mb}));
}

// Every smp_mb variant this CPU can run, called by name.
TEST(Litmus, EveryVariant)
{
	REQUIRE_TWO_CPUS();
	uarch::Cpu cpu;
	uarch::probe_host(&cpu, 0, 0);
	int ran = 0;
	for (uint32_t i = 1; i < uint32_t(uarch::Impl::count); i++) {
		auto impl = uarch::Impl(i);
		void *fn = uarch::impl_fn(uarch::op_smp_mb, impl);
		if (!fn)
			continue;   // not a variant of smp_mb on this architecture
		std::string name = std::string("smp_mb variant ") + uarch::impl_name(impl);
		if (!uarch::impl_runs_on(uarch::op_smp_mb, impl, cpu)) {
			printf("[ skipped  ] %s: this CPU cannot run it\n", name.c_str());
			continue;
		}
		SCOPED_TRACE(name);
		expect_fenced(run_sb(name.c_str(), CallMb{reinterpret_cast<void (*)()>(fn)}));
		ran++;
	}
	printf("[ variants ] %d smp_mb variants ran\n", ran);
	EXPECT_GE(ran, 2);
}
