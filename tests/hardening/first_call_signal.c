/* A signal handler that calls memcpy while the library is binding memcpy
 * (its first call) must not wait for that binding: it would wait forever
 * for the code it interrupted. Made deterministic with seccomp: the binding
 * asks sched_getaffinity (the process's CPU count), which a filter turns
 * into SIGSYS inside the binding; the handler copies through the same
 * memcpy entry and checks the bytes. Run under LD_PRELOAD with the preload
 * library (whose entries bind at their first call); a handler that waited
 * would hang the test until its timeout.
 * Prints "ok: ..." and exits 0; 1 on a wrong copy or a handler that never
 * ran; 77 (skipped) where seccomp filters are unavailable. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

typedef void *(*copy_fn)(void *, const void *, size_t);
typedef const char *(*binding_fn)(void);

static copy_fn volatile g_copy;
static binding_fn g_binding;
static volatile sig_atomic_t g_ran, g_bad;
static char g_during[16];

static void on_sigsys(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	ucontext_t *uc = ucv;
	unsigned char from[300], to[300];
	for (int i = 0; i < 300; i++)
		from[i] = (unsigned char)(i * 7 + 1), to[i] = 0;
	const char *b = g_binding ? g_binding() : "?";
	size_t n = strlen(b) < sizeof g_during - 1 ? strlen(b) : sizeof g_during - 1;
	for (size_t i = 0; i < n; i++)
		g_during[i] = b[i];
	if (g_copy(to, from, sizeof to) != to)
		g_bad = 1;
	for (int i = 0; i < 300; i++)
		if (to[i] != from[i])
			g_bad = 1;
	g_ran++;
	/* The trapped call fails as a refused one would (the binding then
	 * counts no CPUs, which it handles). */
	if (si->si_syscall == SYS_sched_getaffinity)
		uc->uc_mcontext.gregs[REG_RAX] = -EPERM;
}

int main(void)
{
	g_copy = (copy_fn)dlsym(RTLD_DEFAULT, "memcpy");
	g_binding = (binding_fn)dlsym(RTLD_DEFAULT, "uarch_preload_binding");
	if (!g_binding) {
		fprintf(stderr, "first_call_signal: run it under LD_PRELOAD=libuarch_preload.so\n");
		return 1;
	}
	if (strcmp(g_binding(), "unbound") != 0) {
		fprintf(stderr, "first_call_signal: memcpy was bound before main (%s): nothing to test\n", g_binding());
		return 1;
	}
	static struct sigaction sa;   /* zeroed without a call to memset: not yet */
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO;
	if (sigaction(SIGSYS, &sa, NULL) != 0)
		return 1;
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_sched_getaffinity, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		fprintf(stderr, "first_call_signal: seccomp: %s\n", strerror(errno));
		return 77;
	}
	unsigned char from[5000], to[5000];
	for (int i = 0; i < 5000; i++)
		from[i] = (unsigned char)(i * 13 + 5), to[i] = 0;
	if (g_copy(to, from, 100) != to || memcmp(to, from, 100) != 0) {
		fprintf(stderr, "first_call_signal: the first copy came out wrong\n");
		return 1;
	}
	if (!g_ran) {
		fprintf(stderr, "first_call_signal: the binding asked no sched_getaffinity: the handler never ran\n");
		return 1;
	}
	if (g_bad) {
		fprintf(stderr, "first_call_signal: the copy inside the handler came out wrong\n");
		return 1;
	}
	/* Bound now, and a large copy (the patched entry) still right. */
	if (g_copy(to, from, sizeof to) != to || memcmp(to, from, sizeof to) != 0) {
		fprintf(stderr, "first_call_signal: a copy after binding came out wrong\n");
		return 1;
	}
	printf("ok: a handler ran inside the binding (entries %s then) and copied right; afterwards %s\n",
	       g_during, g_binding());
	return 0;
}
