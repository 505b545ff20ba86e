// The C library's names around memcpy/memset that call the bound variants:
// mempcpy, __mempcpy, bzero, explicit_bzero and the five fortify forms
// (the rows of src/table/libc_names.def whose form is not entry).
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

// One definition per form of src/table/libc_names.def; prefix P (empty
// for the preload library's interposing names, __wrap_ for ld --wrap) and
// note N. A file defines them all with
//   #define UARCH_LIBC_NAME(name, op, form) UARCH_LIBC_##form(P, N, name, op)
//   #include "table/libc_names.def"
// explicit_bzero: the stores must happen although the buffer is dead
// afterwards; the empty asm with d as an input and a memory clobber makes
// them observable. _chk forms: dstlen is the size of the destination
// object as the compiler knows it; too small: fail before anything is
// written.
#define UARCH_LIBC_entry(P, N, name, op)   // bound directly: preload/entry.cpp, dispatch/wrap.cpp
#define UARCH_LIBC_pcpy(P, N, name, op)                                                             \
	UARCH_LIBC_EXPORT void *P##name(void *d, const void *s, size_t n)                           \
	{                                                                                          \
		N(name, op, d, s, n)                                                               \
		return static_cast<char *>(uarch::bound_memcpy(d, s, n)) + n;                      \
	}
#define UARCH_LIBC_zero(P, N, name, op)                                                             \
	UARCH_LIBC_EXPORT void P##name(void *d, size_t n)                                           \
	{                                                                                          \
		N(name, op, d, nullptr, n)                                                         \
		uarch::bound_memset(d, 0, n);                                                      \
	}
#define UARCH_LIBC_ezero(P, N, name, op)                                                            \
	UARCH_LIBC_EXPORT void P##name(void *d, size_t n)                                           \
	{                                                                                          \
		N(name, op, d, nullptr, n)                                                         \
		uarch::bound_memset(d, 0, n);                                                      \
		__asm__ __volatile__("" ::"r"(d) : "memory");                                      \
	}
#define UARCH_LIBC_CHK(dstlen, n)                                                                   \
	if (__builtin_expect(dstlen < n, 0))                                                       \
		__chk_fail();
#define UARCH_LIBC_chk_copy(P, N, name, op)                                                         \
	UARCH_LIBC_EXPORT void *P##name(void *d, const void *s, size_t n, size_t dstlen)            \
	{                                                                                          \
		UARCH_LIBC_CHK(dstlen, n)                                                          \
		N(name, op, d, s, n)                                                               \
		return uarch::bound_##op(d, s, n);                                                 \
	}
#define UARCH_LIBC_chk_pcpy(P, N, name, op)                                                         \
	UARCH_LIBC_EXPORT void *P##name(void *d, const void *s, size_t n, size_t dstlen)            \
	{                                                                                          \
		UARCH_LIBC_CHK(dstlen, n)                                                          \
		N(name, op, d, s, n)                                                               \
		return static_cast<char *>(uarch::bound_memcpy(d, s, n)) + n;                      \
	}
#define UARCH_LIBC_chk_set(P, N, name, op)                                                          \
	UARCH_LIBC_EXPORT void *P##name(void *d, int c, size_t n, size_t dstlen)                    \
	{                                                                                          \
		UARCH_LIBC_CHK(dstlen, n)                                                          \
		N(name, op, d, nullptr, n)                                                         \
		return uarch::bound_memset(d, c, n);                                               \
	}
#define UARCH_LIBC_chk_ezero(P, N, name, op)                                                        \
	UARCH_LIBC_EXPORT void P##name(void *d, size_t n, size_t dstlen)                            \
	{                                                                                          \
		UARCH_LIBC_CHK(dstlen, n)                                                          \
		N(name, op, d, nullptr, n)                                                         \
		uarch::bound_memset(d, 0, n);                                                      \
		__asm__ __volatile__("" ::"r"(d) : "memory");                                      \
	}
