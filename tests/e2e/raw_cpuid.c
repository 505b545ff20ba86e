/* Prints avx512f, erms, fsrm and fsrs as this CPU's CPUID reports them,
 * read here with the compiler's <cpuid.h>, independently of uarch's probe.
 * AVX-512 counts only when the OS enabled its register state (XCR0 bits
 * 1, 2, 5, 6, 7), as the probe's contract says. */
#include <cpuid.h>
#include <stdint.h>
#include <stdio.h>

int main(void)
{
	unsigned a, b, c, d, max;
	max = __get_cpuid_max(0, NULL);
	unsigned b7 = 0, d7 = 0, a71 = 0;
	if (max >= 7) {
		__cpuid_count(7, 0, a, b, c, d);
		b7 = b, d7 = d;
		if (a >= 1) {
			__cpuid_count(7, 1, a, b, c, d);
			a71 = a;
		}
	}
	__cpuid(1, a, b, c, d);
	int osxsave = (c >> 27) & 1;
	uint64_t xcr0 = 0;
	if (osxsave) {
		uint32_t lo, hi;
		__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
		xcr0 = ((uint64_t)hi << 32) | lo;
	}
	int zmm_state = (xcr0 & 0xe6) == 0xe6;
	printf("avx512f=%d\n", (int)((b7 >> 16) & 1) & zmm_state);
	printf("erms=%d\n", (int)((b7 >> 9) & 1));
	printf("fsrm=%d\n", (int)((d7 >> 4) & 1));
	printf("fsrs=%d\n", (int)((a71 >> 11) & 1));
	printf("# cpuid.7.0.ebx.avx512f=%d xcr0=%#llx\n", (int)((b7 >> 16) & 1), (unsigned long long)xcr0);
	return 0;
}
