/* dlopen()s the uarch library named on the command line and prints its
 * bindings, as impl_print does. The setuid/setgid tests copy this helper
 * and the libraries into a temporary directory, make the copy set-id and
 * check that UARCH_TUNABLES is ignored: a set-id program gets AT_SECURE, and
 * the loader then ignores LD_PRELOAD paths and $ORIGIN run paths, so the
 * libraries are loaded by absolute path here. */
#include <dlfcn.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s /path/to/libuarch.so|libuarch_preload.so\n", argv[0]);
		return 2;
	}
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("# dlopen failed: %s\n", dlerror());
		return 2;
	}
	/* libuarch.so's API, or the preload library's query of its bindings. */
	int pre = dlsym(h, "uarch_impl") == NULL;
	const char *(*impl)(const char *) =
		(const char *(*)(const char *))dlsym(h, pre ? "uarch_preload_impl" : "uarch_impl");
	const char *(*op)(unsigned) = (const char *(*)(unsigned))dlsym(h, pre ? "uarch_preload_op" : "uarch_op");
	if (!impl || !op) {
		printf("# neither uarch_impl nor uarch_preload_impl in %s\n", argv[1]);
		return 2;
	}
	printf("# at_secure=%lu uid=%d euid=%d gid=%d egid=%d\n", getauxval(AT_SECURE), (int)getuid(),
	       (int)geteuid(), (int)getgid(), (int)getegid());
	for (unsigned i = 0; op(i); i++) {
		const char *v = impl(op(i));
		printf("%s=%s\n", op(i), v ? v : "(null)");
	}
	return 0;
}
