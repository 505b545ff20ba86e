// A wake with no sleeper makes no system call: the library's own count of
// FUTEX_WAKE calls (incremented only on that path) stays put, and under
// strace (when it is installed and may trace) no futex call shows.
#include <climits>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>
#include "common.h"

using namespace idle_test;

namespace {

TEST(Wake, NoSleeperNoSyscall)
{
	alignas(64) static uint32_t w[64];
	idle::Stats before = idle::stats();
	for (int i = 0; i < 100000; i++) {
		uint32_t *a = &w[i % 64];
		st(a, i);
		EXPECT_EQ(idle_wake(a, i % 3 == 0 ? INT_MAX : 1), 0);
	}
	idle::Stats after = idle::stats();
	EXPECT_EQ(after.futex_wakes, before.futex_wakes);
	EXPECT_EQ(after.futex_waits, before.futex_waits);
}

// The counter is live: a sleeper in the futex makes the wake a system call
// (exactly one), which wakes it, and the waiter count goes back to zero.
// The waiter may be counted but not yet queued in the kernel when the wake
// comes (a busy machine): then the kernel wakes nobody, the waiter finds
// the new value itself, and the round is tried again.
TEST(Wake, SleeperMakesOneSyscall)
{
	Watchdog wd(30, current_test());
	alignas(64) static uint32_t w;
	IdlePolicy p = make_policy({Stage::futex});
	int woke = 0;
	for (int round = 0; round < 10 && !woke; round++) {
		w = 0;
		std::thread t([&] {
			while (ld(&w) == 0)
				idle_wait(&w, 0, -1, p);
		});
		while (idle::sleepers(&w) == 0)
			std::this_thread::yield();
		std::this_thread::sleep_for(std::chrono::milliseconds(2));   // into the kernel
		idle::Stats before = idle::stats();
		st(&w, 1);
		int r = idle_wake(&w, 1);
		idle::Stats after = idle::stats();
		t.join();
		EXPECT_EQ(after.futex_wakes, before.futex_wakes + 1);
		EXPECT_LE(r, 1);
		woke = r;
		EXPECT_EQ(idle::sleepers(&w), 0u);
	}
	EXPECT_EQ(woke, 1) << "no round found the waiter asleep in the kernel";
}

// A waiter in the spin stage is woken by the store itself: no system call
// on either side.
TEST(Wake, SpinnerNeedsNoSyscall)
{
	Watchdog wd(30, current_test());
	alignas(64) static uint32_t w;
	w = 0;
	std::atomic<bool> in{false};
	IdlePolicy p = make_policy({Stage::spin});
	idle::Stats before = idle::stats();
	std::thread t([&] {
		in = true;
		EXPECT_EQ(idle_wait(&w, 0, -1, p), 0);
	});
	while (!in)
		std::this_thread::yield();
	st(&w, 1);
	EXPECT_EQ(idle_wake(&w, 1), 0);
	t.join();
	idle::Stats after = idle::stats();
	EXPECT_EQ(after.futex_wakes, before.futex_wakes);
	EXPECT_EQ(after.futex_waits, before.futex_waits);
}

// Independent of the library's counter: strace counts the futex calls that
// a helper run of this binary makes in 10^4 wakes with no sleeper. The
// helper marks its start and end with getppid() so that the C library's
// own futex calls (thread start-up) are not counted.
TEST(Wake, NoSyscallUnderStrace)
{
	if (std::system("strace -V >/dev/null 2>&1") != 0)
		GTEST_SKIP() << "strace: not installed";
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	ASSERT_GT(n, 0);
	self[n] = 0;
	std::string out = testing::TempDir() + "idle_strace.txt";
	std::string cmd = std::string("strace -f -qq -e trace=futex,getppid -o ") + out + " " + self +
			  " --gtest_filter=WakeHelper.* --gtest_also_run_disabled_tests >/dev/null 2>&1";
	int rc = std::system(cmd.c_str());
	std::ifstream in(out);
	if (rc != 0 || !in)
		GTEST_SKIP() << "strace: could not trace (ptrace not permitted?)";
	std::string line;
	int marks = 0, futex_between = 0, wakes_between = 0;
	while (std::getline(in, line)) {
		if (line.find("getppid(") != std::string::npos)
			marks++;
		else if (marks == 1 && line.find("futex(") != std::string::npos) {
			futex_between++;
			if (line.find("FUTEX_WAKE") != std::string::npos)
				wakes_between++;
		}
	}
	std::remove(out.c_str());
	ASSERT_EQ(marks, 2) << "helper markers not seen";
	EXPECT_EQ(wakes_between, 0);
	EXPECT_EQ(futex_between, 0);
}

// Run only by NoSyscallUnderStrace.
TEST(WakeHelper, DISABLED_WakesWithoutSleeper)
{
	alignas(64) static uint32_t w;
	(void)getppid();
	for (int i = 0; i < 10000; i++) {
		st(&w, i);
		idle_wake(&w, i & 1 ? 1 : INT_MAX);
	}
	(void)getppid();
}

} // namespace
