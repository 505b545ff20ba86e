/* A thread's first counted call under SECCOMP_MODE_STRICT (read, write,
 * _exit and sigreturn only): the recorder must make no system call inside
 * memcpy, memmove or memset. Strict mode binds the one thread that asks for
 * it: a new thread asks, then makes its first calls. Run under
 * LD_PRELOAD=libuarch_record.so (and the others). Exit 77 without seccomp. */
#define _GNU_SOURCE
#include <linux/seccomp.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static char src[70000], dst[70000];
static volatile int result = -1;

static void *first_calls(void *arg)
{
	(void)arg;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) != 0) {
		result = 77;
		return NULL;
	}
	static const size_t sizes[] = {1, 16, 100, 4096, 65536};
	int ok = 1;
	for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		size_t n = sizes[i];
		memset(dst, 0, n + 1);
		memcpy(dst, src, n);
		memmove(dst + 1, dst, n);
		ok &= dst[n] == src[n - 1] && dst[1] == src[0];
	}
	result = ok ? 0 : 1;
	syscall(SYS_exit, 0);   /* this thread only; pthread's exit would call more */
	return NULL;
}

int main(void)
{
	for (size_t i = 0; i < sizeof src; i++)
		src[i] = (char)(i * 7 + 3);
	fflush(stdout);
	pid_t p = fork();
	if (p == 0) {
		pthread_t t;
		if (pthread_create(&t, NULL, first_calls, NULL) != 0)
			syscall(SYS_exit_group, 3);
		while (result < 0)
			usleep(1000);
		syscall(SYS_exit_group, result);
	}
	int st = 0;
	if (p < 0 || waitpid(p, &st, 0) != p) {
		printf("FAIL: fork or wait\n");
		return 1;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
		printf("skipped: SECCOMP_MODE_STRICT is not available here\n");
		return 77;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		printf("FAIL: a thread's first calls under strict seccomp: %s %d\n",
		       WIFSIGNALED(st) ? "killed by signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		return 1;
	}
	printf("a thread's first memcpy, memmove and memset survived strict seccomp\n");
	return 0;
}
