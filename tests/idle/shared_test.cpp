// uarch_idle_word: waits across processes (fork, a MAP_SHARED page) and
// across copies of the library in one process (this test's own static core,
// libuarch.so by dlopen, and a second libuarch.so by dlmopen in a new link
// namespace). No lost wake-up in 10^5 handoffs each way, with random delays
// that send the waiter through every stage; timeouts never early.
#include <dlfcn.h>
#include <signal.h>
#include <sys/mman.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cerrno>
#include <cstdint>
#include "common.h"
#include "dispatch/state.h"
#include "idle/idle.h"
#include "uarch.h"

using namespace idle_test;

namespace {

// One copy of the library's shared-wait entry points.
struct Api {
	std::string name;
	int (*wait)(uarch_idle_word *, uint32_t, int64_t);
	int (*wake)(uarch_idle_word *, int);
};

// The core linked into this test (its own copy of the policy state and
// budget table): what a plugin built with libuarch.a carries.
int core_wait(uarch_idle_word *w, uint32_t expected, int64_t timeout_ns)
{
	return uarch::idle_wait_shared(w, expected, timeout_ns, uarch::state().plan.idle);
}
int core_wake(uarch_idle_word *w, int count) { return uarch::idle_wake_shared(w, count); }
Api linked_in() { return {"static core", &core_wait, &core_wake}; }

std::string libuarch_path()
{
	const char *root = std::getenv("UARCH_BUILD_ROOT");
	return std::string(root ? root : ".") + "/libuarch.so";
}

// libuarch.so opened by dlopen (into the main namespace, next to the static
// core: a second copy) or by dlmopen into a namespace of its own (a third,
// with its own C library). Stays loaded for the whole run.
bool open_copy(bool own_namespace, Api *out, std::string *why)
{
	std::string path = libuarch_path();
	void *h = own_namespace ? dlmopen(LM_ID_NEWLM, path.c_str(), RTLD_NOW | RTLD_LOCAL)
				: dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		*why = std::string(own_namespace ? "dlmopen" : "dlopen") + " " + path + ": " + (e ? e : "?");
		return false;
	}
	out->name = own_namespace ? "libuarch.so (dlmopen)" : "libuarch.so (dlopen)";
	out->wait = reinterpret_cast<int (*)(uarch_idle_word *, uint32_t, int64_t)>(dlsym(h, "uarch_idle_wait_shared"));
	out->wake = reinterpret_cast<int (*)(uarch_idle_word *, int)>(dlsym(h, "uarch_idle_wake_shared"));
	if (!out->wait || !out->wake) {
		*why = path + " lacks uarch_idle_wait_shared/uarch_idle_wake_shared";
		return false;
	}
	return true;
}

uint64_t mono()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return uint64_t(ts.tv_sec) * 1000000000 + uint64_t(ts.tv_nsec);
}

struct Rng {
	uint64_t s;
	uint32_t next()
	{
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		return uint32_t(s >> 32);
	}
};

// A random pause before a store: none, a short spin (caught by the spin
// stage), one around the spin budget, or a long one (the waiter sleeps).
void random_delay(Rng &r)
{
	uint32_t x = r.next(), k = x % 100;
	uint64_t ns = k < 40 ? 0 : k < 70 ? x % 3000 : k < 92 ? 8000 + x % 30000 : 60000 + x % 200000;
	if (ns >= 60000) {
		timespec ts = {0, long(ns)};
		nanosleep(&ts, nullptr);
		return;
	}
	for (uint64_t t0 = mono(); mono() - t0 < ns;)
		idle::cpu_relax();
}

// What both sides of a ping-pong share: for a process pair, a MAP_SHARED
// page; for threads, ordinary memory.
struct Pingpong {
	uarch_idle_word to[2];          // side k waits on to[k]
	uint32_t stop;
	uint64_t lost[2];               // waits that timed out although the value had changed
	uint64_t sleepers_seen[2];      // stores made while the waiter slept in the kernel
	uint64_t done[2];               // rounds finished
};
static_assert(sizeof(uarch_idle_word) == 8 && alignof(uarch_idle_word) == 8);

// Waits until w->value == target. False if the run was stopped.
bool wait_for(const Api &api, Pingpong *pp, int side, uint32_t target)
{
	uarch_idle_word *w = &pp->to[side];
	for (;;) {
		uint32_t v = ld(&w->value);
		if (v == target)
			return true;
		if (ld(&pp->stop))
			return false;
		// 1 s: far longer than any delay, so a wait that lasts it while
		// the value moved slept through the wake-up (it then returns 0,
		// having seen the change, or ETIMEDOUT: count either). Three
		// such stop the run instead of letting it crawl to the watchdog.
		uint64_t t0 = mono();
		int r = api.wait(w, v, 1000000000);
		if (mono() - t0 >= 1000000000 && ld(&w->value) != v && ++pp->lost[side] >= 3)
			st(&pp->stop, 1);
		if (r != 0 && r != ETIMEDOUT) {
			st(&pp->stop, 1);
			return false;
		}
	}
}

void post(const Api &api, Pingpong *pp, int to_side, uint32_t v, int from_side)
{
	uarch_idle_word *w = &pp->to[to_side];
	if (__atomic_load_n(&w->sleepers, __ATOMIC_RELAXED))
		pp->sleepers_seen[from_side]++;
	st(&w->value, v);
	api.wake(w, 1);
}

// Side 0 posts first; each round is two handoffs, one each way.
void run_side(const Api &api, Pingpong *pp, int side, uint32_t rounds, uint64_t seed)
{
	Rng rng{seed};
	for (uint32_t i = 1; i <= rounds; i++) {
		if (side == 0) {
			random_delay(rng);
			post(api, pp, 1, i, 0);
			if (!wait_for(api, pp, 0, i))
				return;
		} else {
			if (!wait_for(api, pp, 1, i))
				return;
			random_delay(rng);
			post(api, pp, 0, i, 1);
		}
		pp->done[side] = i;
	}
}

void expect_clean(const Pingpong &pp, uint32_t rounds, const std::string &what)
{
	EXPECT_EQ(pp.lost[0] + pp.lost[1], 0u) << what << ": lost wake-ups";
	EXPECT_EQ(pp.done[0], rounds) << what;
	EXPECT_EQ(pp.done[1], rounds) << what;
	// The delays must have sent waiters into the kernel, or the futex half
	// of the handoff went untested.
	EXPECT_GT(pp.sleepers_seen[0] + pp.sleepers_seen[1], rounds / 50) << what << ": too few sleeps to test";
	EXPECT_EQ(pp.to[0].sleepers + pp.to[1].sleepers, 0u) << what << ": sleepers left counted";
	std::printf("  %s: %llu handoffs, %llu found the waiter asleep\n", what.c_str(),
		    (unsigned long long)(pp.done[0] + pp.done[1]),
		    (unsigned long long)(pp.sleepers_seen[0] + pp.sleepers_seen[1]));
}

constexpr uint32_t rounds = 50000;   // x2 handoffs = 10^5

TEST(SharedHandoff, AcrossProcesses)
{
	Watchdog wd(150, current_test());
	void *m = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(m, MAP_FAILED);
	Pingpong *pp = new (m) Pingpong{};
	Api api = linked_in();
	pid_t pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(150);
		run_side(api, pp, 1, rounds, 0x9e3779b97f4a7c15ull);
		_exit(0);
	}
	run_side(api, pp, 0, rounds, 0x2545f4914f6cdd1dull);
	if (pp->done[0] != rounds)
		st(&pp->stop, 1), post(api, pp, 1, ~0u, 0);
	int status = 0;
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
	expect_clean(*pp, rounds, "two processes");
	munmap(m, 4096);
}

class Copies : public ::testing::Test {
protected:
	static void SetUpTestSuite()
	{
		std::string why;
		ok_a_ = open_copy(false, &a_, &why);
		ok_b_ = ok_a_ && open_copy(true, &b_, &why);
		why_ = why;
	}
	void SetUp() override
	{
		if (!ok_b_)
			GTEST_SKIP() << why_;
	}
	static Api a_, b_;
	static bool ok_a_, ok_b_;
	static std::string why_;
};
Api Copies::a_, Copies::b_;
bool Copies::ok_a_, Copies::ok_b_;
std::string Copies::why_;

void threads_pingpong(const Api &x, const Api &y, uint32_t n)
{
	Pingpong pp{};
	std::thread t([&] { run_side(y, &pp, 1, n, 0x9e3779b97f4a7c15ull); });
	run_side(x, &pp, 0, n, 0x2545f4914f6cdd1dull);
	if (pp.done[0] != n)
		st(&pp.stop, 1), post(x, &pp, 1, ~0u, 0);
	t.join();
	expect_clean(pp, n, x.name + " <-> " + y.name);
}

TEST_F(Copies, AreDistinct)
{
	Api c = linked_in();
	EXPECT_NE(reinterpret_cast<void *>(a_.wait), reinterpret_cast<void *>(b_.wait));
	EXPECT_NE(reinterpret_cast<void *>(a_.wait), reinterpret_cast<void *>(c.wait));
	EXPECT_NE(reinterpret_cast<void *>(b_.wait), reinterpret_cast<void *>(c.wait));
}

TEST_F(Copies, HandoffDlopenAndDlmopen)
{
	Watchdog wd(150, current_test());
	threads_pingpong(a_, b_, rounds);
}

TEST_F(Copies, HandoffStaticCoreAndSharedLibrary)
{
	Watchdog wd(150, current_test());
	threads_pingpong(linked_in(), a_, rounds / 2);
	threads_pingpong(b_, linked_in(), rounds / 2);
}

// Timeouts of every size never return early, through each copy and in a
// second process; and a word that changes ends the wait.
void check_timeouts(const Api &api, uarch_idle_word *w, int64_t *worst_margin)
{
	*worst_margin = INT64_MAX;
	for (int64_t t : {int64_t(1), int64_t(1000), int64_t(15000), int64_t(25000), int64_t(100000),
			  int64_t(1000000), int64_t(3000000)})
		for (int rep = 0; rep < 5; rep++) {
			uint64_t t0 = mono();
			int r = api.wait(w, ld(&w->value), t);
			int64_t el = int64_t(mono() - t0);
			if (r != ETIMEDOUT)
				*worst_margin = INT64_MIN;
			*worst_margin = std::min(*worst_margin, el - t);
		}
}

TEST_F(Copies, TimeoutsNeverEarly)
{
	Watchdog wd(60, current_test());
	for (const Api &api : {linked_in(), a_, b_}) {
		alignas(8) uarch_idle_word w{5, 0};
		int64_t margin;
		check_timeouts(api, &w, &margin);
		EXPECT_GE(margin, 0) << api.name << ": returned early (or not ETIMEDOUT)";
		EXPECT_EQ(w.sleepers, 0u) << api.name;
	}
}

TEST(SharedTimeout, NeverEarlyInAnotherProcess)
{
	Watchdog wd(60, current_test());
	void *m = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(m, MAP_FAILED);
	auto *w = new (m) uarch_idle_word{9, 0};
	auto *margin = reinterpret_cast<int64_t *>(static_cast<char *>(m) + 64);
	pid_t pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(60);
		check_timeouts(linked_in(), w, margin);
		_exit(0);
	}
	int status = 0;
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_GE(*margin, 0) << "a timeout returned early (or not ETIMEDOUT) in the child";
	EXPECT_EQ(w->sleepers, 0u);
	munmap(m, 4096);
}

TEST(SharedApi, Arguments)
{
	alignas(16) unsigned char buf[32] = {};
	auto *odd = reinterpret_cast<uarch_idle_word *>(buf + 4);   // 4-aligned, not 8
	EXPECT_EQ(core_wait(nullptr, 0, 0), EINVAL);
	EXPECT_EQ(core_wait(odd, 0, -1), EINVAL);
	EXPECT_EQ(core_wake(nullptr, 1), -EINVAL);
	EXPECT_EQ(core_wake(odd, 1), -EINVAL);
	alignas(8) uarch_idle_word w{3, 0};
	EXPECT_EQ(core_wait(&w, 4, -1), 0);   // differs: at once
	EXPECT_EQ(core_wait(&w, 3, 0), ETIMEDOUT);
	EXPECT_EQ(core_wake(&w, 0), 0);
}

// A wake with nobody asleep makes no system call (the count next to the word
// says so), and one with a sleeper does.
TEST(SharedApi, WakeWithoutSleeperSkipsTheSystemCall)
{
	Watchdog wd(30, current_test());
	alignas(8) uarch_idle_word w{0, 0};
	idle::Stats s0 = idle::stats();
	// Watched from outside: in SECCOMP_MODE_STRICT any system call but
	// read, write, _exit and sigreturn kills the process.
	pid_t pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) != 0)
			syscall(SYS_exit, 77);
		int bad = 0;
		for (int i = 0; i < 1000; i++)
			bad |= core_wake(&w, 1) != 0;
		syscall(SYS_exit, bad);
	}
	int status = 0;
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
		GTEST_SKIP() << "SECCOMP_MODE_STRICT is not available here";
	EXPECT_TRUE(WIFEXITED(status)) << "killed (signal " << WTERMSIG(status) << "): a wake made a system call";
	EXPECT_EQ(WEXITSTATUS(status), 0) << "a wake without sleepers returned non-zero";
	for (int i = 0; i < 1000; i++)
		EXPECT_EQ(core_wake(&w, 1), 0);
	EXPECT_EQ(idle::stats().futex_wakes, s0.futex_wakes);
	std::thread t([&] {
		while (ld(&w.value) == 0)
			core_wait(&w, 0, -1);
	});
	while (__atomic_load_n(&w.sleepers, __ATOMIC_RELAXED) == 0)
		std::this_thread::sleep_for(std::chrono::microseconds(50));
	// Counted, so the wake makes its system call; it wakes 1, or 0 when
	// the waiter has counted itself but not yet reached FUTEX_WAIT (which
	// then sees the new value and returns: qemu-user shows that race).
	st(&w.value, 1);
	EXPECT_LE(core_wake(&w, INT32_MAX), 1);
	t.join();
	EXPECT_EQ(idle::stats().futex_wakes, s0.futex_wakes + 1);
	EXPECT_EQ(w.sleepers, 0u);
}

} // namespace
