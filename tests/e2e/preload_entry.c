/* How libuarch_preload.so's memcpy, memmove and memset are bound in this
 * process, read from the bytes the calls reach, and whether they work.
 * Run under LD_PRELOAD: preload_entry ENTRY_PAGE_OFFSET (the offset of the
 * library's entry page, from its symbol table). Prints:
 *   binding_at_start=B entries_at_start=E first_bytes=HEX8
 *     (uarch_preload_binding(), uarch_preload_entries(), the entry page's
 *     first bytes) before any large copy;
 *   per name, what the program reaches - its own address of the function
 *   (own=, the GOT's value) and dlsym's:
 *     NAME impl=VARIANT addr=0x... own=0x... offset=0x... bytes=HEX16
 *   entries_after_64k=E after one 64 KiB copy, then copies of 256 KiB,
 *   2 MiB and 64 MiB, then per entry (what objects bound before the
 *   library reach):
 *     entry NAME bytes=HEX16 [target=0x... offset=0x...]
 *   (target/offset: where a direct jump - x86-64's `jmp rel32`, arm64's
 *   `b` - would go; the entries are never rewritten, so none should),
 *   binding=B entries=E,
 *   wx_mappings=N (mappings writable and executable at once, from
 *   /proc/self/maps), anon_exec_mappings=N (executable mappings backed by
 *   no file; anon_exec_at_start=N: the same before any copy, printed after
 *   the first line), then "all ok" when every name and every entry
 *   copied/set right over sizes 0..4200 and several alignments (against
 *   byte loops). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

static void print_bytes(const void *p)
{
	for (int b = 0; b < 16; b++)
		printf("%02x", ((const unsigned char *)p)[b]);
}

static int check_all(void *const fn[3])
{
	return check_copy((copy_fn)fn[0], 0) && check_copy((copy_fn)fn[1], 0) && check_copy((copy_fn)fn[1], 1) &&
	       check_set((set_fn)fn[2]);
}

/* Mappings writable and executable at once, and executable ones backed by
 * no file (the kernel's [vdso] and [vsyscall] aside), from /proc/self/maps;
 * -1 where it cannot be read. */
static void count_mappings(int *wx, int *anon_x)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	if (!maps)
		return;
	char line[512], perms[8];
	unsigned long inode;
	*wx = *anon_x = 0;
	while (fgets(line, sizeof line, maps))
		if (sscanf(line, "%*s %7s %*s %*s %lu", perms, &inode) == 2) {
			*wx += perms[1] == 'w' && perms[2] == 'x';
			*anon_x += perms[2] == 'x' && inode == 0 && !strstr(line, "[vdso]") && !strstr(line, "[vsyscall]");
		}
	fclose(maps);
}

int main(int argc, char **argv)
{
	name_fn impl = (name_fn)dlsym(RTLD_DEFAULT, "uarch_preload_impl");
	binding_fn binding = (binding_fn)dlsym(RTLD_DEFAULT, "uarch_preload_binding");
	binding_fn entries = (binding_fn)dlsym(RTLD_DEFAULT, "uarch_preload_entries");
	Dl_info lib;
	if (argc != 2 || !impl || !binding || !entries || !dladdr((void *)impl, &lib) || !lib.dli_fbase) {
		fprintf(stderr, "preload_entry: usage: LD_PRELOAD=libuarch_preload.so preload_entry ENTRY_PAGE_OFFSET\n");
		return 2;
	}
	const unsigned char *page = (const unsigned char *)lib.dli_fbase + strtoul(argv[1], NULL, 16);
	static const char *const names[] = {"memcpy", "memmove", "memset"};
	/* The program's own addresses (its GOT) and the loader's answer. */
	void *own[3] = {(void *)&memcpy, (void *)&memmove, (void *)&memset};
	void *fn[3], *entry[3];
	for (int i = 0; i < 3; i++)
		fn[i] = dlsym(RTLD_DEFAULT, names[i]), entry[i] = (void *)(page + 32 * i);   /* entry_stride */
	printf("binding_at_start=%s entries_at_start=%s first_bytes=%02x%02x%02x%02x\n", binding(), entries(), page[0],
	       page[1], page[2], page[3]);
	int wx0 = -1, anon_x0 = -1;
	count_mappings(&wx0, &anon_x0);
	printf("anon_exec_at_start=%d\n", anon_x0);
	for (int i = 0; i < 3; i++) {
		Dl_info info;
		printf("%s impl=%s addr=%p own=%p", names[i], impl(names[i]), fn[i], own[i]);
		if (dladdr(fn[i], &info) && info.dli_fbase)
			printf(" offset=0x%lx", (unsigned long)((uintptr_t)fn[i] - (uintptr_t)info.dli_fbase));
		printf(" bytes=");
		print_bytes(fn[i]);
		printf("\n");
	}
	/* Copies small and large: none of them changes how the entries are
	 * bound. */
	static unsigned char big_src[256 << 10], big_dst[256 << 10];
	((copy_fn)fn[0])(big_dst, big_src, 64 << 10);
	printf("entries_after_64k=%s\n", entries());
	((copy_fn)fn[0])(big_dst, big_src, sizeof big_dst);
	for (size_t n = 2 << 20; n <= 64 << 20; n *= 32) {
		unsigned char *a = malloc(n), *b = malloc(n);
		if (!a || !b)
			return 2;
		((set_fn)fn[2])(a, 7, n);
		((copy_fn)fn[0])(b, a, n);
		((copy_fn)entry[0])(a, b, n);
		if (a[n - 1] != 7 || b[n / 2] != 7)
			return 1;
		free(a);
		free(b);
	}
	for (int i = 0; i < 3; i++) {
		const unsigned char *p = entry[i];
		printf("entry %s bytes=", names[i]);
		print_bytes(p);
		const unsigned char *target = NULL;
#if defined(__x86_64__)
		if (p[0] == 0xe9) {   /* jmp rel32 */
			int32_t rel;
			memcpy(&rel, p + 1, 4);
			target = p + 5 + rel;
		}
#elif defined(__aarch64__)
		uint32_t w;
		memcpy(&w, p, 4);
		if ((w >> 26) == 0x05)   /* b imm26: a signed count of words */
			target = p + (int32_t)(w << 6) / 16;
#endif
		if (target)
			printf(" target=%p offset=0x%lx", (const void *)target,
			       (unsigned long)((uintptr_t)target - (uintptr_t)lib.dli_fbase));
		printf("\n");
	}
	printf("binding=%s\nentries=%s\n", binding(), entries());
	int wx = -1, anon_x = -1;
	count_mappings(&wx, &anon_x);
	printf("wx_mappings=%d\nanon_exec_mappings=%d\n", wx, anon_x);
	int ok = check_all(fn) && check_all(own) && check_all(entry);
	printf("%s\n", ok ? "all ok" : "WRONG result");
	return ok ? 0 : 1;
}
