/* The preload entries are patched by building a new page (RW), making it
 * R+X and moving it over the old one with mremap(MREMAP_FIXED). This checks
 * that primitive under fire: threads call into a code page while the main
 * thread replaces it 2000 times with pages that return 1 or 2; every call
 * must return 1 or 2 (never fault, never run a half-written page), and no
 * mapping may ever be writable and executable. Exit 0 when so. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

enum { page = 4096, threads = 3, rounds = 2000 };
static unsigned char *code;
static atomic_int stop;
static atomic_long calls, bad;

/* A page whose entry is `mov eax, value; ret`, the rest int3. */
static void *make_page(int value)
{
	unsigned char *p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0xcc, page);
	p[0] = 0xb8;
	memcpy(p + 1, &value, 4);
	p[5] = 0xc3;
	if (mprotect(p, page, PROT_READ | PROT_EXEC) != 0)
		return NULL;
	return p;
}

static void *caller(void *arg)
{
	(void)arg;
	int (*f)(void) = (int (*)(void))(void *)code;
	while (!atomic_load(&stop)) {
		int v = f();
		if (v != 1 && v != 2)
			atomic_fetch_add(&bad, 1);
		atomic_fetch_add(&calls, 1);
	}
	return NULL;
}

int main(void)
{
	code = make_page(1);
	if (!code) {
		printf("cannot make an executable page here\n");
		return 77;
	}
	pthread_t t[threads];
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, caller, NULL);
	int wx = 0;
	for (int r = 0; r < rounds; r++) {
		void *fresh = make_page(1 + (r & 1));
		if (!fresh || mremap(fresh, page, page, MREMAP_MAYMOVE | MREMAP_FIXED, code) != code) {
			printf("round %d: could not replace the page\n", r);
			return 1;
		}
		if (r % 500 == 0) {
			FILE *m = fopen("/proc/self/maps", "r");
			char line[512], perms[8];
			while (m && fgets(line, sizeof line, m))
				if (sscanf(line, "%*s %7s", perms) == 1 && perms[1] == 'w' && perms[2] == 'x')
					wx++;
			if (m)
				fclose(m);
		}
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	printf("%d replacements, %ld calls, %ld wrong, %d W+X mappings seen\n", rounds, atomic_load(&calls),
	       atomic_load(&bad), wx);
	return atomic_load(&bad) == 0 && atomic_load(&calls) > 0 && wx == 0 ? 0 : 1;
}
