/* How libuarch_preload.so's memcpy, memmove and memset entries are bound in
 * this process, read from the entries' own bytes, and whether they work.
 * Run under LD_PRELOAD. Prints binding_at_start=... and the first bytes of
 * memcpy before any large copy, makes one 64 KiB copy (binding_after_64k=...)
 * and one of 256 KiB, then prints, per
 * entry:
 *   NAME impl=VARIANT addr=0x... bytes=HEX16 [target=0x... offset=0x...]
 * (target/offset: where a `jmp rel32` goes, as an address and as an offset
 * into the object that holds it), then binding=patched|pointer|unbound from
 * uarch_preload_binding(), then "all ok" when every entry copied/set right
 * over sizes 0..4200 and several alignments (against byte loops), and
 * wx_mappings=N: how many mappings of this process are writable and
 * executable at once (/proc/self/maps). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef const char *(*name_fn)(const char *);
typedef const char *(*binding_fn)(void);
typedef void *(*copy_fn)(void *, const void *, size_t);
typedef void *(*set_fn)(void *, int, size_t);

static unsigned char src[8192], dst[8192], want[8192];

static int check_copy(copy_fn f, int overlap)
{
	for (size_t n = 0; n <= 4200; n += n < 80 ? 1 : 37)
		for (size_t da = 0; da < 4; da++)
			for (size_t sa = 0; sa < 4; sa++) {
				for (size_t i = 0; i < sizeof src; i++)
					src[i] = (unsigned char)(i * 7 + n), dst[i] = want[i] = (unsigned char)(i * 13);
				unsigned char *d = dst + 64 + da, *s = overlap ? dst + 64 + sa + 5 : src + 64 + sa;
				unsigned char *w = want + 64 + da;
				const unsigned char *ws = overlap ? want + 64 + sa + 5 : s;
				unsigned char tmp[4300];
				for (size_t i = 0; i < n; i++)
					tmp[i] = ws[i];
				for (size_t i = 0; i < n; i++)
					w[i] = tmp[i];
				if (f(d, s, n) != d || memcmp(dst, want, sizeof dst) != 0)
					return 0;
			}
	return 1;
}

static int check_set(set_fn f)
{
	for (size_t n = 0; n <= 4200; n += n < 80 ? 1 : 37)
		for (size_t da = 0; da < 4; da++) {
			for (size_t i = 0; i < sizeof dst; i++)
				dst[i] = want[i] = (unsigned char)(i * 13);
			for (size_t i = 0; i < n; i++)
				want[64 + da + i] = 0xa5;
			if (f(dst + 64 + da, 0xa5, n) != dst + 64 + da || memcmp(dst, want, sizeof dst) != 0)
				return 0;
		}
	return 1;
}

int main(void)
{
	name_fn impl = (name_fn)dlsym(RTLD_DEFAULT, "uarch_impl");
	binding_fn binding = (binding_fn)dlsym(RTLD_DEFAULT, "uarch_preload_binding");
	if (!impl || !binding) {
		fprintf(stderr, "preload_entry: uarch_impl/uarch_preload_binding not found: run under LD_PRELOAD\n");
		return 2;
	}
	static const char *const names[] = {"memcpy", "memmove", "memset"};
	void *fn[3];
	for (int i = 0; i < 3; i++)
		fn[i] = dlsym(RTLD_DEFAULT, names[i]);
	/* Before any large copy: bound through pointers, the patch pending. */
	printf("binding_at_start=%s first_bytes=%02x%02x\n", binding(), ((unsigned char *)fn[0])[0],
	       ((unsigned char *)fn[0])[1]);
	/* A 64 KiB copy needs no cache size (the plan decides alike below
	 * 256 KiB): still deferred. The first copy of 256 KiB finishes the plan
	 * and patches the entries. */
	static unsigned char big_src[256 << 10], big_dst[256 << 10];
	((copy_fn)fn[0])(big_dst, big_src, 64 << 10);
	printf("binding_after_64k=%s\n", binding());
	((copy_fn)fn[0])(big_dst, big_src, sizeof big_dst);
	for (int i = 0; i < 3; i++) {
		const unsigned char *p = fn[i];
		printf("%s impl=%s addr=%p bytes=", names[i], impl(names[i]), fn[i]);
		for (int b = 0; b < 16; b++)
			printf("%02x", p[b]);
		if (p[0] == 0xe9) {
			int32_t rel;
			memcpy(&rel, p + 1, 4);
			const unsigned char *target = p + 5 + rel;
			Dl_info info;
			if (dladdr(target, &info) && info.dli_fbase)
				printf(" target=%p offset=0x%lx", (const void *)target,
				       (unsigned long)((uintptr_t)target - (uintptr_t)info.dli_fbase));
		}
		printf("\n");
	}
	printf("binding=%s\n", binding());
	FILE *maps = fopen("/proc/self/maps", "r");
	int wx = -1;
	if (maps) {
		char line[512], perms[8];
		wx = 0;
		while (fgets(line, sizeof line, maps))
			if (sscanf(line, "%*s %7s", perms) == 1 && perms[1] == 'w' && perms[2] == 'x')
				wx++;
		fclose(maps);
	}
	printf("wx_mappings=%d\n", wx);
	int ok = check_copy((copy_fn)fn[0], 0) && check_copy((copy_fn)fn[1], 0) && check_copy((copy_fn)fn[1], 1) &&
		 check_set((set_fn)fn[2]);
	printf("%s\n", ok ? "all ok" : "WRONG result");
	return ok ? 0 : 1;
}
