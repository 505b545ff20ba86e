/* A signal handler that copies while the library finishes binding (at the
 * first copy of 256 KiB it reads the caches and replaces its entries' page)
 * must not wait for that binding: it would wait forever for the code it
 * interrupted. Made deterministic with seccomp: before it replaces the
 * page the binding opens /proc/thread-self/status (to see whether the
 * thread is under a seccomp filter), which a filter turns into SIGSYS
 * inside the binding; the handler copies, small and large, through the
 * same memcpy and checks the bytes, then fails the open as a refusing
 * system would. Run under LD_PRELOAD
 * with the preload library; a handler that waited would hang the test
 * until its timeout.
 * Prints "ok: ..." and exits 0; 1 on a wrong copy, a handler that never
 * ran or a binding not as expected; 77 (skipped) where seccomp filters are
 * unavailable. */
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
static binding_fn g_entries;
static volatile sig_atomic_t g_ran, g_bad;
static char g_during[16];
static unsigned char g_big_from[300 << 10], g_big_to[300 << 10];

static int copy_checked(unsigned char *to, const unsigned char *from, size_t n)
{
	if (g_copy(to, from, n) != to)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (to[i] != from[i])
			return 0;
	return 1;
}

static void on_sigsys(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	ucontext_t *uc = ucv;
	unsigned char from[300], to[300];
	for (int i = 0; i < 300; i++)
		from[i] = (unsigned char)(i * 7 + 1), to[i] = 0;
	const char *b = g_entries();
	size_t n = strlen(b) < sizeof g_during - 1 ? strlen(b) : sizeof g_during - 1;
	for (size_t i = 0; i < n; i++)
		g_during[i] = b[i];
	for (size_t i = 0; i < sizeof g_big_from; i++)
		g_big_from[i] = (unsigned char)(i * 11 + 3);
	if (!copy_checked(to, from, sizeof to) || !copy_checked(g_big_to, g_big_from, sizeof g_big_to))
		g_bad = 1;
	g_ran++;
	/* The trapped call fails as a refused one would (the entries then keep
	 * their pointers). */
	if (si->si_syscall == SYS_openat)
		uc->uc_mcontext.gregs[REG_RAX] = -EPERM;
}

int main(void)
{
	g_copy = (copy_fn)dlsym(RTLD_DEFAULT, "memcpy");
	binding_fn binding = (binding_fn)dlsym(RTLD_DEFAULT, "uarch_preload_binding");
	g_entries = (binding_fn)dlsym(RTLD_DEFAULT, "uarch_preload_entries");
	if (!binding || !g_entries) {
		fprintf(stderr, "late_binding_signal: run it under LD_PRELOAD=libuarch_preload.so\n");
		return 1;
	}
	if (strcmp(g_entries(), "deferred") != 0) {
		fprintf(stderr, "late_binding_signal: the entries are %s before any large copy, expected deferred\n",
			g_entries());
		return 1;
	}
	static struct sigaction sa;   /* zeroed without a call to memset */
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO;
	if (sigaction(SIGSYS, &sa, NULL) != 0)
		return 1;
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		fprintf(stderr, "late_binding_signal: seccomp: %s\n", strerror(errno));
		return 77;
	}
	static unsigned char from[256 << 10], to[256 << 10];
	for (size_t i = 0; i < sizeof from; i++)
		from[i] = (unsigned char)(i * 13 + 5);
	if (!copy_checked(to, from, sizeof to)) {
		fprintf(stderr, "late_binding_signal: the first large copy came out wrong\n");
		return 1;
	}
	if (!g_ran) {
		fprintf(stderr, "late_binding_signal: the binding opened nothing: the handler never ran\n");
		return 1;
	}
	if (g_bad) {
		fprintf(stderr, "late_binding_signal: a copy inside the handler came out wrong\n");
		return 1;
	}
	if (strcmp(g_entries(), "pointer") != 0) {
		fprintf(stderr, "late_binding_signal: the entries are %s after a refused open, expected pointer\n",
			g_entries());
		return 1;
	}
	if (!copy_checked(to, from, 100) || !copy_checked(to, from, sizeof to)) {
		fprintf(stderr, "late_binding_signal: a copy after binding came out wrong\n");
		return 1;
	}
	printf("ok: a handler ran inside the binding (entries %s then) and copied right; afterwards %s, entries %s\n",
	       g_during, binding(), g_entries());
	return 0;
}
