// Prints how libuarch_preload bound this process ("symbols", "pointer",
// ...), or "not preloaded" when /etc/ld.so.preload and LD_PRELOAD did
// not put it here: the check docs/deploy.md gives for a new process.
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
	typedef const char *(*binding_fn)(void);
	binding_fn binding = (binding_fn)dlsym(RTLD_DEFAULT, "uarch_preload_binding");
	puts(binding ? binding() : "not preloaded");
	return 0;
}
