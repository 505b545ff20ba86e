// "erms": rep movsb / rep stosb at every size, nothing else. The seed 001
// question, asked directly: on a CPU whose string instructions start fast
// (FSRM for copies, FSRS for fills), is a bare rep movsb as good as the
// vector ladder? The policy never binds it by default; uarch-bench and
// uarch-tune measure it, UARCH_TUNABLES=memcpy=erms binds it.
#include <stddef.h>
#include <stdint.h>
#include "arch/x86_64/mem.h"

// Forward: any n (rcx = 0 moves nothing), disjoint buffers or d < s.
// Backward when d lies inside [s, s + n): with the direction flag set,
// rep movsb runs from the last byte down, so every source byte is read
// before the copy overwrites it. cld restores the ABI's DF = 0.
extern "C" UARCH_MEM_ENTRY __attribute__((visibility("hidden"))) void *
uarch_x86_64_memmove_erms(void *dst, const void *src, size_t n)
{
	char *d = static_cast<char *>(dst);
	const char *s = static_cast<const char *>(src);
	if (uintptr_t(d) - uintptr_t(s) < n) {
		d += n - 1;
		s += n - 1;
		__asm__ __volatile__("std\n\trep movsb\n\tcld" : "+D"(d), "+S"(s), "+c"(n) : : "memory", "cc");
	} else {
		__asm__ __volatile__("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
	}
	return dst;
}

// memcpy tolerates overlap, as every x86-64 variant's does: the same entry.
extern "C" __attribute__((visibility("hidden"))) void *uarch_x86_64_memcpy_erms(void *, const void *, size_t) noexcept
	__attribute__((alias("uarch_x86_64_memmove_erms")));

extern "C" UARCH_MEM_ENTRY __attribute__((visibility("hidden"))) void *
uarch_x86_64_memset_erms(void *dst, int c, size_t n)
{
	char *d = static_cast<char *>(dst);
	__asm__ __volatile__("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
	return dst;
}
