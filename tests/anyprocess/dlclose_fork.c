/* dlopen, a copy through the library, dlclose, then fork: a child that
 * runs the fork handlers of a library no longer mapped dies with SIGSEGV.
 * Each argument is a library to try; exits 1 naming the first that fails. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef void *(*copy_fn)(void *, const void *, size_t);

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			printf("FAIL: dlopen %s: %s\n", argv[i], dlerror());
			return 1;
		}
		copy_fn f = (copy_fn)dlsym(h, "memcpy");
		if (!f)
			f = (copy_fn)dlsym(h, "uarch_memcpy");
		char a[64] = "bytes", b[64];
		if (!f || f(b, a, sizeof a) != b || strcmp(b, "bytes") != 0) {
			printf("FAIL: %s: no working copy\n", argv[i]);
			return 1;
		}
		if (dlclose(h) != 0) {
			printf("FAIL: dlclose %s: %s\n", argv[i], dlerror());
			return 1;
		}
		fflush(stdout);
		pid_t p = fork();
		if (p == 0)
			_exit(0);
		int st = 0;
		if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			printf("FAIL: %s: after dlclose a forked child ended with status 0x%x\n", argv[i], st);
			return 1;
		}
		printf("ok: %s: dlopen, dlclose, fork\n", argv[i]);
	}
	return 0;
}
