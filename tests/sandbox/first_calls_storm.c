/* First calls never wait: threads make their first call of every entry
 * point at once (under lazy binding each unbound PLT slot runs its
 * resolver then; in the function-pointer build each first call binds its
 * pointer) while a storm of signals interrupts them, and the handler calls
 * every entry point too; children forked in the middle of it call every
 * entry point again. A wait for another context would hang: the watchdog
 * (alarm) then kills the process and the test fails. Every copy, move and
 * fill is checked byte by byte.
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

enum { nthreads = 8, nforks = 4 };
static pthread_barrier_t g_start;
static atomic_int g_bad, g_handled, g_done;

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

static void *worker(void *arg)
{
	unsigned char(*buf)[(300 << 10) + 1] = g_big[(intptr_t)arg];
	pthread_barrier_wait(&g_start);
	for (int rep = 0; rep < 20; rep++)
		for (size_t n = 1; n <= (300 << 10); n = n * 3 + 1)   /* up to 265,720: past 256 KiB */
			if (!call_all(buf[0], buf[1], n))
				atomic_fetch_add(&g_bad, 1);
	atomic_fetch_add(&g_done, 1);
	return NULL;
}

int main(void)
{
	alarm(60);   /* the watchdog: SIGALRM's default action ends the process */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	pthread_t t[nthreads];
	pthread_barrier_init(&g_start, NULL, nthreads + 1);
	for (intptr_t i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	/* The first signals land before the threads' own first calls: then
	 * the handler's calls are the first, racing the other threads'. */
	for (int round = 0; round < 20; round++)
		for (int i = 0; i < nthreads; i++)
			pthread_kill(t[i], SIGUSR1);
	pthread_barrier_wait(&g_start);
	int forks = 0, children_bad = 0;
	for (int round = 0; atomic_load(&g_done) < nthreads || round < 200; round++) {
		for (int i = 0; i < nthreads; i++)
			pthread_kill(t[i], SIGUSR1);
		if (round % 50 == 0 && forks < nforks) {
			pid_t p = fork();
			if (p == 0) {
				alarm(20);
				unsigned char a[70001], b[70001];
				_exit(call_all(a, b, 70000) && call_all(a, b, 7) ? 0 : 1);
			}
			int st;
			forks++;
			if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
				children_bad++;
		}
		if (round > 100000)
			break;
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	unsigned char a[1001], b[1001];
	int bad = atomic_load(&g_bad) + !call_all(a, b, 1000);
	printf("%s: %d threads' first calls, %d signal handlers that called every entry point, %d forked children "
	       "(%d failed), %d wrong results\n",
	       bad || children_bad ? "FAIL" : "ok", nthreads, atomic_load(&g_handled), forks, children_bad, bad);
	return bad || children_bad ? 1 : 0;
}
