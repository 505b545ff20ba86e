/* uarch_idle_wait in a process whose seccomp filter refuses the
 * clock_gettime system call (EPERM), on the first wait of the process (so
 * the clock's frequency is found, or calibrated, under the filter): it
 * must neither hang (the watchdog's SIGALRM ends the test) nor time out
 * before its timeout. The C library's clock_gettime reads the vDSO, which
 * the filter does not see; where it cannot (a clock source without vDSO
 * support), only "no hang" is checked, and said.
 * Exit 0 on success, 1 on a failure, 77 (skipped) without seccomp. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "uarch.h"

static int64_t now_ns(int *ok)
{
	struct timespec ts;
	*ok = clock_gettime(CLOCK_MONOTONIC, &ts) == 0;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clock_gettime, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		printf("skipped: no seccomp filters here\n");
		return 77;
	}
	alarm(20);   /* a hang ends here, killed by SIGALRM */
	const int64_t timeout_ns = 2000000;
	uint32_t word = 5;
	int ok_a, ok_b;
	int64_t a = now_ns(&ok_a);
	int r = uarch_idle_wait(&word, 5, timeout_ns);
	int64_t b = now_ns(&ok_b);
	if (r != ETIMEDOUT) {
		printf("FAIL: uarch_idle_wait returned %d, expected ETIMEDOUT (%d)\n", r, ETIMEDOUT);
		return 1;
	}
	if (!ok_a || !ok_b) {
		printf("ok: no hang; the vDSO clock is refused here too, so the wait's length is not checked\n");
		return 0;
	}
	if (b - a < timeout_ns) {
		printf("FAIL: a wait of %lld ns timed out after %lld ns\n", (long long)timeout_ns, (long long)(b - a));
		return 1;
	}
	printf("ok: timed out after %lld ns of %lld, with the clock_gettime system call refused\n",
	       (long long)(b - a), (long long)timeout_ns);
	return 0;
}
