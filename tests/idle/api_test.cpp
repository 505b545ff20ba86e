// The public C API through libuarch.so: argument checks, timeouts, a
// ping-pong, and the bound policy's name (which UARCH_TUNABLES can change:
// UARCH_EXPECT_IDLE names what the test run expects).
#include <gtest/gtest.h>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <sched.h>
#include <sstream>
#include <string>
#include <vector>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include "uarch.h"

namespace {

using Clock = std::chrono::steady_clock;

TEST(IdleApi, BoundPolicyName)
{
	const char *name = uarch_impl("idle_wait");
	ASSERT_NE(name, nullptr);
	std::printf("  idle_wait: %s\n", name);
	if (const char *want = std::getenv("UARCH_EXPECT_IDLE"))
		EXPECT_STREQ(name, want);
	else
		EXPECT_NE(std::strstr(name, "futex"), nullptr) << "the default policy ends in the futex";
}

// The library counts the CPUs it may use when it loads: this binary,
// started again with one CPU in its affinity mask, binds the futex alone.
TEST(IdleApi, OneCpuProcessSleepsAtOnce)
{
	if (std::getenv("UARCH_TUNABLES"))
		GTEST_SKIP() << "UARCH_TUNABLES sets the policy in this run";
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	ASSERT_GT(n, 0);
	self[n] = 0;
	// Under emulation (Meson's exe wrapper, e.g. qemu-aarch64 -L ...) the
	// copy must be started through the wrapper too. Split on blanks: the
	// cross file's wrapper has no quoted words.
	std::vector<std::string> words;
	if (const char *w = std::getenv("MESON_EXE_WRAPPER")) {
		std::istringstream in(w);
		for (std::string word; in >> word;)
			words.push_back(word);
	}
	words.push_back(self);
	words.push_back("--gtest_filter=IdleApi.BoundPolicyName");
	std::vector<char *> argv;
	for (std::string &word : words)
		argv.push_back(word.data());
	argv.push_back(nullptr);
	// The copy's environment, made here: between fork and exec only
	// async-signal-safe calls.
	std::vector<std::string> env_store = {"UARCH_EXPECT_IDLE=futex"};
	for (char **e = environ; *e; e++)
		if (std::strncmp(*e, "UARCH_EXPECT_IDLE=", 18))
			env_store.push_back(*e);
	std::vector<char *> envp;
	for (std::string &e : env_store)
		envp.push_back(e.data());
	envp.push_back(nullptr);
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	pid_t pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		if (sched_setaffinity(0, sizeof one, &one) != 0)
			_exit(3);
		execvpe(argv[0], argv.data(), envp.data());
		_exit(4);
	}
	int status = 0;
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(WEXITSTATUS(status), 0) << "the one-CPU copy did not bind \"futex\" (3: setaffinity, 4: exec)";
}

TEST(IdleApi, Arguments)
{
	alignas(8) uint32_t w[2] = {1, 1};
	EXPECT_EQ(uarch_idle_wait(nullptr, 0, -1), EINVAL);
	EXPECT_EQ(uarch_idle_wait(reinterpret_cast<const uint32_t *>(reinterpret_cast<char *>(w) + 1), 1, -1), EINVAL);
	EXPECT_EQ(uarch_idle_wait(&w[0], 2, -1), 0);      // already differs
	EXPECT_EQ(uarch_idle_wait(&w[0], 1, 0), ETIMEDOUT);
	EXPECT_EQ(uarch_idle_wake(nullptr, 1), -EINVAL);
	EXPECT_EQ(uarch_idle_wake(reinterpret_cast<uint32_t *>(reinterpret_cast<char *>(w) + 2), 1), -EINVAL);
	EXPECT_EQ(uarch_idle_wake(&w[0], INT_MAX), 0);     // nobody sleeps
	EXPECT_EQ(uarch_idle_wake(&w[0], 0), 0);
	// The shared pair: the same convention.
	alignas(8) uarch_idle_word sw[2] = {{1, 0}, {1, 0}};
	uarch_idle_word *mis = reinterpret_cast<uarch_idle_word *>(reinterpret_cast<char *>(sw) + 4);
	EXPECT_EQ(uarch_idle_wait_shared(nullptr, 0, -1), EINVAL);
	EXPECT_EQ(uarch_idle_wait_shared(mis, 1, -1), EINVAL);
	EXPECT_EQ(uarch_idle_wait_shared(&sw[0], 2, -1), 0);
	EXPECT_EQ(uarch_idle_wait_shared(&sw[0], 1, 0), ETIMEDOUT);
	EXPECT_EQ(uarch_idle_wake_shared(nullptr, 1), -EINVAL);
	EXPECT_EQ(uarch_idle_wake_shared(mis, 1), -EINVAL);
	EXPECT_EQ(uarch_idle_wake_shared(&sw[0], INT_MAX), 0);
}

TEST(IdleApi, Timeout)
{
	alignas(4) uint32_t w = 0;
	for (int i = 0; i < 5; i++) {
		auto t0 = Clock::now();
		EXPECT_EQ(uarch_idle_wait(&w, 0, 1000000), ETIMEDOUT);
		auto el = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
		EXPECT_GE(el, 1000000);
		EXPECT_LT(el, 50000000);
	}
}

// 20000 handoffs, or fewer when a busy machine makes them slow (2 s).
TEST(IdleApi, PingPong)
{
	alignas(64) static uint32_t w, limit;
	w = 0;
	limit = 20000;
	static uint32_t moves[2];
	auto player = [](uint32_t parity) {
		for (;;) {
			uint32_t cur;
			while (((cur = __atomic_load_n(&w, __ATOMIC_ACQUIRE)) & 1) != parity)
				EXPECT_EQ(uarch_idle_wait(&w, cur, -1), 0);
			uint32_t lim = __atomic_load_n(&limit, __ATOMIC_ACQUIRE);
			__atomic_store_n(&w, cur + 1, __ATOMIC_RELEASE);
			uarch_idle_wake(&w, 1);
			if (cur >= lim)
				return;
			moves[parity]++;
		}
	};
	auto t0 = Clock::now();
	std::thread a(player, 0), b(player, 1);
	while (__atomic_load_n(&w, __ATOMIC_ACQUIRE) < limit &&
	       std::chrono::duration<double>(Clock::now() - t0).count() < 2.0)
		std::this_thread::sleep_for(std::chrono::milliseconds(2));
	uint32_t now = __atomic_load_n(&w, __ATOMIC_ACQUIRE);
	if (now < limit)
		__atomic_store_n(&limit, now, __ATOMIC_RELEASE);
	a.join();
	b.join();
	EXPECT_LE(moves[0] > moves[1] ? moves[0] - moves[1] : moves[1] - moves[0], 1u);
	EXPECT_GE(moves[0] + moves[1], 100u);
	std::printf("  %u handoffs in %.3f s\n", moves[0] + moves[1],
		    std::chrono::duration<double>(Clock::now() - t0).count());
}

} // namespace
