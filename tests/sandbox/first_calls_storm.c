/* First calls never wait: threads make their first call of every entry
 * point at once (under lazy binding each unbound PLT slot runs its
 * resolver then; in the function-pointer build each first call binds its
 * pointer) while a storm of signals interrupts them, and the handler calls
 * every entry point too; children forked and vforked in the middle of it
 * call every entry point again. A wait for another context would hang:
 * the watchdog (alarm) then kills the process and the test fails. Every
 * copy, move and fill is checked byte by byte.
 * Built with STORM_UNPUBLISHED (linked with libuarch.a, whose test hook
 * it calls), each round starts with the state unpublished and 0-4 of its
 * build slots claimed by contexts that never finish: then the threads,
 * handlers and the vfork child (its own pid, its parent's memory) race in
 * the build itself, in the slots and on their stacks, and every plan
 * they compute must name the variants the first build named.
 * Prints "ok: ..." and exits 0; 1 on a wrong byte or a child that failed. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#define UARCH_NO_INLINE 1   /* the exported, dispatched barrier and prefetch */
#include "uarch.h"

enum { nthreads = 8, nrounds = 20 };
static pthread_barrier_t g_start;
static atomic_int g_bad, g_handled, g_done;

#ifdef STORM_UNPUBLISHED
/* libuarch.a's test hook (hidden in libuarch.so): unpublishes the state,
 * with the first `claimed` build slots held by contexts that never finish. */
void state_forget_for_test(unsigned claimed) __asm__("_ZN5uarch21state_forget_for_testEj");
#endif

static int check(const unsigned char *p, size_t n, int (*want)(size_t))
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (unsigned char)want(i))
			return 0;
	return 1;
}
static int pat(size_t i) { return (int)(i * 7 + 3); }
static int pat_shift(size_t i) { return pat(i + 1); }
static int five(size_t i) { (void)i; return 5; }

/* Every entry point once, on buffers of n + 1 bytes (the caller's). */
static int call_all(unsigned char *a, unsigned char *b, size_t n)
{
	int ok = 1;
	for (size_t i = 0; i < n + 1; i++)
		a[i] = (unsigned char)pat(i);
	ok &= uarch_memcpy(b, a, n) == b && check(b, n, pat);
	ok &= uarch_memmove(a, a + 1, n) == a && check(a, n, pat_shift);   /* forward, overlapping */
	ok &= uarch_memset(b, 5, n) == b && check(b, n, five);
	uarch_smp_mb();
	uarch_prefetchw(a);
	uarch_prefetch_range(a, n);
	uint32_t word = 1;
	ok &= uarch_idle_wait(&word, 0, 0) == 0;           /* the value differs: at once */
	ok &= uarch_idle_wake(&word, 1) == 0;              /* nobody sleeps */
	uarch_idle_word w = {1, 0};
	ok &= uarch_idle_wait_shared(&w, 0, 0) == 0;
	ok &= uarch_idle_wake_shared(&w, 1) == 0;
	static const char *const ops[] = {"memcpy", "memmove", "memset", "smp_mb", "prefetch_range", "idle_wait"};
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		ok &= uarch_impl(ops[i]) != NULL;
	return ok;
}

static void on_signal(int sig)
{
	(void)sig;
	unsigned char a[301], b[301];
	if (!call_all(a, b, 300))
		atomic_fetch_add(&g_bad, 1);
	atomic_fetch_add(&g_handled, 1);
}

static unsigned char g_big[nthreads][2][(300 << 10) + 1];

/* One pass over the sizes a round, between barriers. SIGUSR1 is blocked
 * from the end of a pass until the next round has begun: no handler runs
 * while the main thread sets the round up. */
static void *worker(void *arg)
{
	unsigned char(*buf)[(300 << 10) + 1] = g_big[(intptr_t)arg];
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	for (int round = 0; round < nrounds; round++) {
		pthread_barrier_wait(&g_start);
		pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
		for (size_t n = 1; n <= (300 << 10); n = n * 3 + 1)   /* up to 265,720: past 256 KiB */
			if (!call_all(buf[0], buf[1], n))
				atomic_fetch_add(&g_bad, 1);
		pthread_sigmask(SIG_BLOCK, &usr1, NULL);
		atomic_fetch_add(&g_done, 1);
	}
	return NULL;
}

/* A child that calls every entry point, made by fork or by vfork (then it
 * runs on the parent's memory, beside the parent's other threads). */
static int child_calls(int use_vfork)
{
	static unsigned char a[70001], b[70001];   /* not the parent's frame */
	pid_t p = use_vfork ? vfork() : fork();
	if (p == 0) {
		alarm(20);
		_exit(call_all(a, b, 70000) && call_all(a, b, 7) ? 0 : 1);
	}
	int st;
	return p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int main(void)
{
	alarm(60);   /* the watchdog: SIGALRM's default action ends the process */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);   /* the threads start with it blocked */
	char want[64];
	snprintf(want, sizeof want, "%s", uarch_impl("memcpy"));
	pthread_t t[nthreads];
	pthread_barrier_init(&g_start, NULL, nthreads + 1);
	for (intptr_t i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
	int children = 0, children_bad = 0, differ = 0;
	for (int round = 0; round < nrounds; round++) {
#ifdef STORM_UNPUBLISHED
		state_forget_for_test((unsigned)round % 5);   /* 4: every slot held, all plan on their stacks */
#endif
		/* Signals that land before the round's first calls: then the
		 * handlers' calls are the first, racing the threads'. */
		for (int i = 0; i < nthreads; i++)
			pthread_kill(t[i], SIGUSR1);
		pthread_barrier_wait(&g_start);
		for (int k = 0; atomic_load(&g_done) < nthreads * (round + 1); k++) {
			for (int i = 0; i < nthreads; i++)
				pthread_kill(t[i], SIGUSR1);
			if (k == 2 || k == 40) {
				children++;
				children_bad += !child_calls(k == 2);
			}
		}
		const char *now = uarch_impl("memcpy");
		differ += !now || strcmp(now, want) != 0;
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	unsigned char a[1001], b[1001];
	int bad = atomic_load(&g_bad) + !call_all(a, b, 1000) + differ;
	printf("%s: %d threads x %d rounds of first calls, %d signal handlers that called every entry point, "
	       "%d forked or vforked children (%d failed), %d wrong results, %d rounds that bound memcpy other than %s\n",
	       bad || children_bad ? "FAIL" : "ok", nthreads, nrounds, atomic_load(&g_handled), children, children_bad,
	       atomic_load(&g_bad), differ, want);
	return bad || children_bad ? 1 : 0;
}
