// Built with -fno-builtin -fno-tree-loop-distribute-patterns: the loops below must stay loops,
// not become calls to memcpy/memset (which may be these very functions).
#include "generic/generic.h"
#include <stdint.h>
#include "generic/prefetch_blocks.h"

typedef uintptr_t word __attribute__((may_alias));

// Forward copy, a word at a time once dst is aligned. Also what memcpy
// does: forward is correct for any overlap with dst < src.
static void copy_forward(unsigned char *d, const unsigned char *s, size_t n)
{
	while (n && (uintptr_t(d) & (sizeof(word) - 1))) {
		*d++ = *s++;
		n--;
	}
	for (; n >= sizeof(word); n -= sizeof(word), d += sizeof(word), s += sizeof(word)) {
		word w;
		__builtin_memcpy(&w, s, sizeof w);   // one unaligned load, never a call
		*reinterpret_cast<word *>(d) = w;
	}
	while (n--)
		*d++ = *s++;
}

static void copy_backward(unsigned char *d, const unsigned char *s, size_t n)
{
	d += n;
	s += n;
	while (n && (uintptr_t(d) & (sizeof(word) - 1))) {
		*--d = *--s;
		n--;
	}
	for (; n >= sizeof(word); n -= sizeof(word)) {
		d -= sizeof(word);
		s -= sizeof(word);
		word w;
		__builtin_memcpy(&w, s, sizeof w);
		*reinterpret_cast<word *>(d) = w;
	}
	while (n--)
		*--d = *--s;
}

void *uarch_generic_memmove(void *dst, const void *src, size_t n)
{
	auto *d = static_cast<unsigned char *>(dst);
	auto *s = static_cast<const unsigned char *>(src);
	// Word loads read a whole word before storing it, so a word loop is
	// exact as long as it moves away from the overlap.
	if (uintptr_t(d) - uintptr_t(s) >= n)
		copy_forward(d, s, n);
	else if (d != s)
		copy_backward(d, s, n);
	return dst;
}

// memcpy tolerates overlap as glibc's x86-64 memcpy does.
void *uarch_generic_memcpy(void *dst, const void *src, size_t n)
{
	return uarch_generic_memmove(dst, src, n);
}

void *uarch_generic_memset(void *dst, int c, size_t n)
{
	auto *d = static_cast<unsigned char *>(dst);
	unsigned char b = static_cast<unsigned char>(c);
	while (n && (uintptr_t(d) & (sizeof(word) - 1))) {
		*d++ = b;
		n--;
	}
	word w = word(-1) / 0xff * b;   // b in every byte
	for (; n >= sizeof(word); n -= sizeof(word), d += sizeof(word))
		*reinterpret_cast<word *>(d) = w;
	while (n--)
		*d++ = b;
	return dst;
}

void uarch_generic_smp_mb(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

void uarch_generic_prefetch_range(const void *p, size_t len)
{
	uarch::for_each_prefetch_block(uintptr_t(p), len, uarch::prefetch_stride_shift(),
				       [](uintptr_t a) { __builtin_prefetch(reinterpret_cast<const void *>(a)); });
}
