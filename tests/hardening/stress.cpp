// uarch must never break its host process: every op from many threads at
// once, fork() while other threads are inside uarch, and signal handlers
// that call uarch_memcpy (and, under LD_PRELOAD, the C library's memcpy)
// while the interrupted thread is inside the same function. Built linked to
// libuarch.so, and as a static-pie linked to libuarch.a (STRESS_STATIC).
// Every loop is bounded in iterations and in time.
#include <gtest/gtest.h>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>
#include "uarch.h"

namespace {

using Clock = std::chrono::steady_clock;

uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

// Fills with a pattern from seed; checks it without calling any copy
// function (the compiler could route a loop to memcmp, not to memcpy).
void fill(unsigned char *p, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = static_cast<unsigned char>(mix(seed + i / 8) >> (8 * (i % 8)));
}
bool holds(const unsigned char *p, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != static_cast<unsigned char>(mix(seed + i / 8) >> (8 * (i % 8))))
			return false;
	return true;
}
bool all(const unsigned char *p, size_t n, unsigned char c)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != c)
			return false;
	return true;
}

// One round of every op on private buffers; false on a wrong result.
bool every_op(unsigned char *a, unsigned char *b, size_t cap, uint64_t seed, uint32_t *word)
{
	size_t n = mix(seed) % cap;
	size_t off = mix(seed + 1) % 64;
	if (n + off > cap)
		n = cap - off;
	fill(a, n + off, seed);
	if (uarch_memcpy(b + off, a, n) != b + off || !holds(b + off, n, seed))
		return false;
	// overlapping move up by off: b[2off..] = old b[off..]
	if (n >= off && uarch_memmove(b + off, b, n) != b + off)
		return false;
	if (uarch_memset(a, int(seed & 0xff), n) != a || !all(a, n, static_cast<unsigned char>(seed)))
		return false;
	uarch_prefetch_range(a, n);
	uarch_prefetch(b);
	uarch_prefetchw(b);
	uarch_smp_mb();
	uarch_smp_rmb();
	uarch_smp_wmb();
	uarch_cpu_relax();
	if (!uarch_impl("memcpy") || !uarch_impl("idle_wait") || uarch_impl("nonsense"))
		return false;
	// A wait that returns at once (the value differs: a word no other
	// thread writes), one on the shared word that times out quickly or is
	// woken, and a wake.
	uint32_t mine = uint32_t(seed);
	if (uarch_idle_wait(&mine, mine + 1, 1000) != 0)
		return false;
	uint32_t seen = __atomic_load_n(word, __ATOMIC_ACQUIRE);
	int r = uarch_idle_wait(word, seen, 2000);
	if (r != 0 && r != ETIMEDOUT)
		return false;
	__atomic_fetch_add(word, 1, __ATOMIC_RELEASE);
	uarch_idle_wake(word, INT_MAX);
	return uarch_idle_wait(nullptr, 0, 0) == EINVAL;
}

TEST(Stress, ManyThreadsEveryOp)
{
	const int nthreads = 16;
	std::atomic<int> go{0}, failures{0};
	std::atomic<long> rounds{0};
	alignas(64) uint32_t word = 0;
	std::vector<std::thread> ts;
	for (int t = 0; t < nthreads; t++)
		ts.emplace_back([&, t] {
			const size_t cap = t % 4 == 0 ? 300000 : 9000;
			std::vector<unsigned char> a(cap), b(cap + 64);
			while (!go.load())
				;   // all start together
			auto end = Clock::now() + std::chrono::milliseconds(800);
			for (int i = 0; i < 400 && Clock::now() < end; i++) {
				if (!every_op(a.data(), b.data(), cap, uint64_t(t) << 32 | uint32_t(i), &word))
					failures++;
				rounds++;
			}
		});
	go = 1;
	for (auto &t : ts)
		t.join();
	std::printf("%d threads, %ld rounds of every op\n", nthreads, rounds.load());
	EXPECT_EQ(failures.load(), 0);
	EXPECT_GE(rounds.load(), nthreads);
}

TEST(Stress, ForkWithThreadsInFlight)
{
	std::atomic<bool> stop{false};
	std::atomic<int> failures{0};
	alignas(64) uint32_t word = 0;
	std::vector<std::thread> ts;
	for (int t = 0; t < 4; t++)
		ts.emplace_back([&, t] {
			std::vector<unsigned char> a(200000), b(200064);
			for (uint64_t i = 0; !stop.load(); i++)
				if (!every_op(a.data(), b.data(), a.size(), uint64_t(t) << 40 | i, &word))
					failures++;
		});
	int children = 0, bad_children = 0;
	auto end = Clock::now() + std::chrono::milliseconds(1500);
	for (int i = 0; i < 40 && Clock::now() < end; i++) {
		pid_t p = fork();
		if (p == 0) {
			// Only this thread exists here; the others were inside uarch.
			static unsigned char a[100000], b[100064];
			alignas(64) static uint32_t w = 0;
			bool ok = true;
			for (int k = 0; k < 20 && ok; k++)
				ok = every_op(a, b, sizeof a, uint64_t(i) << 20 | uint64_t(k), &w);
			_exit(ok ? 0 : 1);
		}
		ASSERT_GT(p, 0);
		int st = 0;
		ASSERT_EQ(waitpid(p, &st, 0), p);
		children++;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			bad_children++;
	}
	stop = true;
	for (auto &t : ts)
		t.join();
	std::printf("%d children forked while 4 threads ran every op\n", children);
	EXPECT_EQ(bad_children, 0);
	EXPECT_EQ(failures.load(), 0);
}

// ---- signals ----------------------------------------------------------------

using CopyFn = void *(*)(void *, const void *, size_t);

struct Range {
	uintptr_t lo, hi;
};
// The executable segment that holds fn (found before the signals start:
// nothing of this runs in the handler). The variants live in the same
// segment as the exported entry points.
std::vector<Range> text_of(void *fn)
{
	std::vector<Range> out;
#ifndef STRESS_STATIC
	struct Ctx {
		uintptr_t fn;
		std::vector<Range> *out;
	} ctx{reinterpret_cast<uintptr_t>(fn), &out};
	dl_iterate_phdr(
		[](dl_phdr_info *i, size_t, void *p) {
			auto *c = static_cast<Ctx *>(p);
			for (int k = 0; k < i->dlpi_phnum; k++) {
				const auto &ph = i->dlpi_phdr[k];
				uintptr_t lo = i->dlpi_addr + ph.p_vaddr;
				if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && c->fn >= lo && c->fn < lo + ph.p_memsz)
					c->out->push_back({lo, lo + ph.p_memsz});
			}
			return 0;
		},
		&ctx);
#else
	(void)fn;
#endif
	return out;
}

CopyFn volatile g_handler_copy;
Range g_inside[8];
int g_ninside;
volatile sig_atomic_t g_signals, g_hits_inside, g_handler_bad;

uintptr_t interrupted_pc(void *uc)
{
	auto *u = static_cast<ucontext_t *>(uc);
#if defined(__x86_64__)
	return uintptr_t(u->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
	return uintptr_t(u->uc_mcontext.pc);
#else
	(void)u;
	return 0;
#endif
}

void on_signal(int, siginfo_t *, void *uc)
{
	int saved = errno;
	uintptr_t pc = interrupted_pc(uc);
	for (int i = 0; i < g_ninside; i++)
		if (pc >= g_inside[i].lo && pc < g_inside[i].hi)
			g_hits_inside = g_hits_inside + 1;
	// Own buffers; sizes across the small, vector, rep movsb and loop paths.
	static unsigned char s[40000], d[40064];
	static const size_t sizes[] = {0, 1, 7, 33, 64, 200, 1000, 2500, 5000, 17000, 40000};
	uint64_t k = uint64_t(g_signals);
	size_t n = sizes[k % (sizeof sizes / sizeof sizes[0])];
	size_t off = k % 61;
	fill(s, n, k);
	if (g_handler_copy(d + off, s, n) != d + off || !holds(d + off, n, k))
		g_handler_bad = 1;
	if (uarch_memmove(d + 1, d, n) != d + 1)
		g_handler_bad = 1;
	if (uarch_memset(s, 0x5c, n) != s || !all(s, n, 0x5c))
		g_handler_bad = 1;
	g_signals = g_signals + 1;
	errno = saved;
}

// The main thread copies 4 MiB blocks with fn while another thread sends it
// SIGUSR1 every few microseconds; the handler copies with fn too. Returns
// how many signals landed inside fn's object.
void signal_inside(CopyFn fn, bool require_inside)
{
	g_handler_copy = fn;
	std::vector<Range> r = text_of(reinterpret_cast<void *>(fn));
	g_ninside = 0;
	for (auto x : r)
		if (g_ninside < 8)
			g_inside[g_ninside++] = x;
	g_signals = 0;
	g_hits_inside = 0;
	g_handler_bad = 0;

	struct sigaction sa = {}, old = {};
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);

	const size_t n = 4 << 20;
	std::vector<unsigned char> src(n + 64), dst(n + 64);
	fill(src.data(), n + 64, 99);
	std::atomic<bool> stop{false};
	pthread_t me = pthread_self();
	std::thread sender([&] {
		while (!stop.load()) {
			pthread_kill(me, SIGUSR1);
			std::this_thread::sleep_for(std::chrono::microseconds(20));
		}
	});
	int copies = 0, wrong = 0;
	// Copy until enough signals arrived, not for a fixed time: on a loaded
	// machine the sender thread may get the CPU only now and then.
	auto end = Clock::now() + std::chrono::seconds(15);
	while (Clock::now() < end && (copies < 20 || g_signals <= 10 ||
				      (require_inside && g_hits_inside < 20 && copies < 2000))) {
		size_t so = size_t(copies) % 64, dof = size_t(copies * 7) % 64;
		if (fn(dst.data() + dof, src.data() + so, n) != dst.data() + dof ||
		    memcmp(dst.data() + dof, src.data() + so, n) != 0)
			wrong++;
		copies++;
	}
	stop = true;
	sender.join();
	sigaction(SIGUSR1, &old, nullptr);
	if (g_ninside)
		std::printf("%d copies of 4 MiB, %d signals handled, %d of them interrupted the copy function's object\n",
			    copies, int(g_signals), int(g_hits_inside));
	else
		std::printf("%d copies of 4 MiB, %d signals handled (where they landed is not measured in a static program)\n",
			    copies, int(g_signals));
	EXPECT_EQ(wrong, 0) << "a copy interrupted by signals came out wrong";
	EXPECT_EQ(g_handler_bad, 0) << "a copy inside the signal handler came out wrong";
	EXPECT_GT(g_signals, 10);
	if (require_inside) {
		EXPECT_GT(g_hits_inside, 0) << "no signal arrived while the main thread was inside the library";
	}
}

TEST(Signals, UarchMemcpyInsideHandlerAndMainThread)
{
	bool dynamic = false;
#ifndef STRESS_STATIC
	dynamic = true;
#endif
	signal_inside(uarch_memcpy, dynamic);
}

TEST(Signals, PreloadMemcpyInsideHandlerAndMainThread)
{
#ifdef STRESS_STATIC
	GTEST_SKIP() << "preload memcpy: a static program cannot be preloaded";
#else
	auto fn = reinterpret_cast<CopyFn>(dlsym(RTLD_DEFAULT, "memcpy"));
	Dl_info info;
	if (!fn || !dladdr(reinterpret_cast<void *>(fn), &info) || !info.dli_fname ||
	    !strstr(info.dli_fname, "libuarch_preload"))
		GTEST_SKIP() << "preload memcpy: memcpy is the C library's here; the stress-preload test "
				"runs this under LD_PRELOAD=libuarch_preload.so";
	signal_inside(fn, true);
#endif
}

} // namespace
