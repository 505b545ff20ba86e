// The C library's names around memcpy/memset that call the bound variants:
// mempcpy, __mempcpy, bzero, explicit_bzero and the five fortify forms.
// UARCH_LIBC_NAMES(prefix, note) defines them as prefix##name: empty for the
// preload library's interposing names, __wrap_ for ld --wrap in libuarch.a.
// note(name, op, d, s, n) runs before each call reaches the variant (the
// recorder counts there; UARCH_LIBC_NO_NOTE elsewhere).
#pragma once
#include <stddef.h>
#include "dispatch/bind.h"

extern "C" {
// The C library's fortify failure: prints "*** buffer overflow detected ***"
// and aborts. The one place uarch ends a process, as the contract demands.
[[noreturn]] void __chk_fail(void);
}

#define UARCH_LIBC_NO_NOTE(name, op, d, s, n)
#define UARCH_LIBC_EXPORT extern "C" __attribute__((visibility("default")))

// explicit_bzero: the stores must happen although the buffer is dead
// afterwards; the empty asm with d as an input and a memory clobber makes
// them observable. _chk forms: dstlen is the size of the destination
// object as the compiler knows it; too small: fail before anything is
// written.
#define UARCH_LIBC_NAMES(P, N)                                                                      \
	UARCH_LIBC_EXPORT void *P##mempcpy(void *d, const void *s, size_t n)                        \
	{                                                                                          \
		N(mempcpy, memcpy, d, s, n)                                                        \
		return static_cast<char *>(uarch::bound_memcpy(d, s, n)) + n;                      \
	}                                                                                          \
	UARCH_LIBC_EXPORT void *P##__mempcpy(void *d, const void *s, size_t n)                      \
	{                                                                                          \
		N(__mempcpy, memcpy, d, s, n)                                                      \
		return static_cast<char *>(uarch::bound_memcpy(d, s, n)) + n;                      \
	}                                                                                          \
	UARCH_LIBC_EXPORT void P##bzero(void *d, size_t n)                                          \
	{                                                                                          \
		N(bzero, memset, d, nullptr, n)                                                    \
		uarch::bound_memset(d, 0, n);                                                      \
	}                                                                                          \
	UARCH_LIBC_EXPORT void P##explicit_bzero(void *d, size_t n)                                 \
	{                                                                                          \
		N(explicit_bzero, memset, d, nullptr, n)                                           \
		uarch::bound_memset(d, 0, n);                                                      \
		__asm__ __volatile__("" ::"r"(d) : "memory");                                      \
	}                                                                                          \
	UARCH_LIBC_EXPORT void *P##__memcpy_chk(void *d, const void *s, size_t n, size_t dstlen)    \
	{                                                                                          \
		if (__builtin_expect(dstlen < n, 0))                                               \
			__chk_fail();                                                              \
		N(__memcpy_chk, memcpy, d, s, n)                                                   \
		return uarch::bound_memcpy(d, s, n);                                               \
	}                                                                                          \
	UARCH_LIBC_EXPORT void *P##__memmove_chk(void *d, const void *s, size_t n, size_t dstlen)   \
	{                                                                                          \
		if (__builtin_expect(dstlen < n, 0))                                               \
			__chk_fail();                                                              \
		N(__memmove_chk, memmove, d, s, n)                                                 \
		return uarch::bound_memmove(d, s, n);                                              \
	}                                                                                          \
	UARCH_LIBC_EXPORT void *P##__memset_chk(void *d, int c, size_t n, size_t dstlen)            \
	{                                                                                          \
		if (__builtin_expect(dstlen < n, 0))                                               \
			__chk_fail();                                                              \
		N(__memset_chk, memset, d, nullptr, n)                                             \
		return uarch::bound_memset(d, c, n);                                               \
	}                                                                                          \
	UARCH_LIBC_EXPORT void *P##__mempcpy_chk(void *d, const void *s, size_t n, size_t dstlen)   \
	{                                                                                          \
		if (__builtin_expect(dstlen < n, 0))                                               \
			__chk_fail();                                                              \
		N(__mempcpy_chk, memcpy, d, s, n)                                                  \
		return static_cast<char *>(uarch::bound_memcpy(d, s, n)) + n;                      \
	}                                                                                          \
	UARCH_LIBC_EXPORT void P##__explicit_bzero_chk(void *d, size_t n, size_t dstlen)           \
	{                                                                                          \
		if (__builtin_expect(dstlen < n, 0))                                               \
			__chk_fail();                                                              \
		N(__explicit_bzero_chk, memset, d, nullptr, n)                                     \
		uarch::bound_memset(d, 0, n);                                                      \
		__asm__ __volatile__("" ::"r"(d) : "memory");                                      \
	}
