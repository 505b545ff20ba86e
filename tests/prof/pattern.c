/* A known pattern of memcpy/memmove/memset calls, for the recorder's exact
 * profile test (prof_exact.py holds the same pattern as its expectation).
 * Every call goes through a volatile pointer to the exported name, so the
 * compiler neither inlines nor drops it.
 *   pattern run    the calls, 3 extra threads, and two forked children,
 *                  one ending by exit, one by _exit
 *   pattern exec   11 fills of 9 bytes, an exec that fails between them,
 *                  then execs "pattern run" (the recording follows exec)
 *   pattern many   130 threads of one call each (beyond the recorder's
 *                  128 blocks), then a forked child of one call */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

void *__memcpy_chk(void *, const void *, size_t, size_t);
void *__memset_chk(void *, int, size_t, size_t);
void __explicit_bzero_chk(void *, size_t, size_t);

static void *(*volatile cpy)(void *, const void *, size_t) = memcpy;
static void *(*volatile pcpy)(void *, const void *, size_t) = mempcpy;
static void *(*volatile cpy_chk)(void *, const void *, size_t, size_t) = __memcpy_chk;
static void *(*volatile mov)(void *, const void *, size_t) = memmove;
static void *(*volatile set)(void *, int, size_t) = memset;
static void *(*volatile set_chk)(void *, int, size_t, size_t) = __memset_chk;
static void (*volatile zero)(void *, size_t) = bzero;
static void (*volatile ezero)(void *, size_t) = explicit_bzero;
static void (*volatile ezero_chk)(void *, size_t, size_t) = __explicit_bzero_chk;

static _Alignas(64) char a[1 << 15], b[1 << 15];

static void *worker(void *arg)
{
	static _Alignas(64) char ta[3][512], tb[3][512];
	int t = (int)(long)arg;
	for (int i = 0; i < 1000; i++)
		cpy(ta[t], tb[t] + 32, 256);
	return 0;
}

/* n threads running fn(t), t = 0..n-1 (n <= 130), all joined. */
static void in_threads(void *(*fn)(void *), long n)
{
	pthread_t th[130];
	for (long t = 0; t < n; t++)
		if (pthread_create(&th[t], 0, fn, (void *)t))
			exit(3);
	for (long t = 0; t < n; t++)
		pthread_join(th[t], 0);
}

/* A forked child that fills size bytes at a + dst, calls times, then ends
 * by exit or (quick) by _exit; the parent waits for it. */
static void child_fills(int times, size_t dst, size_t size, int quick)
{
	pid_t pid = fork();
	if (pid == 0) {
		for (int i = 0; i < times; i++)
			set(a + dst, 2, size);
		if (quick)
			_exit(0);
		exit(0);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		exit(4);
}

static void run(void)
{
	static const size_t sizes[] = {0, 1, 7, 64, 4096, 4097, 10000};
	for (int k = 0; k < 7; k++)
		for (int i = 0; i <= k; i++)   /* size k-th: k+1 calls */
			cpy(a + sizes[k] % 64, b + 3, sizes[k]);
	for (int i = 0; i < 5; i++)
		pcpy(a, b, 16);
	for (int i = 0; i < 2; i++)
		cpy_chk(a + 8, b + 8, 8, sizeof a);
	for (int i = 0; i < 3; i++)
		mov(a, b, 100);               /* disjoint */
	for (int i = 0; i < 4; i++)
		mov(a, a + 10, 50);           /* forward overlap */
	for (int i = 0; i < 5; i++)
		mov(a + 10, a, 50);           /* backward overlap */
	for (int i = 0; i < 2; i++)
		mov(a + 64, a + 64, 32);      /* same */
	for (int i = 0; i < 6; i++)
		set(a + 5, 1, 33);
	for (int i = 0; i < 2; i++)
		zero(a, 1000);
	ezero(a + 1, 12);
	set_chk(a + 2, 0, 20, sizeof a);
	for (int i = 0; i < 2; i++)
		ezero_chk(a + 4, 24, sizeof a);

	in_threads(worker, 3);
	child_fills(7, 16, 77, 0);
	child_fills(3, 17, 78, 1);
}

static void *one_call(void *arg)
{
	static _Alignas(64) char t[130][64];
	set(t[(long)arg], 3, 5);
	return 0;
}

static void many(void)
{
	in_threads(one_call, 130);
	child_fills(1, 0, 5, 0);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "exec")) {
		for (int i = 0; i < 9; i++)
			set(a + 3, 4, 9);
		execl("/nonexistent/pattern", argv[0], "run", (char *)0);
		for (int i = 0; i < 2; i++)
			set(a + 3, 4, 9);
		execl("/proc/self/exe", argv[0], "run", (char *)0);
		return 5;
	}
	if (argc > 1 && !strcmp(argv[1], "many")) {
		many();
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "status"))
		return 7;
	run();
	return 0;
}
