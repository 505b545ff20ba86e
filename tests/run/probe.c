/* What a program started by uarch-run sees, without linking uarch: the
 * preload library's binding and memcpy variant (through dlsym), the object
 * that serves memcpy, the preloaded objects in load order, and its own
 * arguments. Exits with the status given as the first argument. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static int show(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	const char *b = base(info->dlpi_name);
	if (strncmp(b, "libuarch_preload", 16) == 0 || strncmp(b, "librun_other", 12) == 0)
		printf("object %s\n", b);
	return 0;
}

int main(int argc, char **argv)
{
	const char *(*binding)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "uarch_preload_binding");
	const char *(*impl)(const char *) = (const char *(*)(const char *))dlsym(RTLD_DEFAULT, "uarch_preload_impl");
	Dl_info info;
	void *cpy = dlsym(RTLD_DEFAULT, "memcpy");
	printf("binding %s\n", binding ? binding() : "(not found)");
	printf("memcpy %s\n", impl ? impl("memcpy") : "(not found)");
	printf("memcpy from %s\n", cpy && dladdr(cpy, &info) && info.dli_fname ? base(info.dli_fname) : "?");
	dl_iterate_phdr(show, NULL);
	printf("args");
	for (int i = 1; i < argc; i++)
		printf(" [%s]", argv[i]);
	printf("\n");
	return argc > 1 ? atoi(argv[1]) : 0;
}
