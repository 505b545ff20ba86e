// The C library's names, for LD_PRELOAD=libuarch_preload.so. They are
// exported unversioned (see preload.map): a program that asks for
// memcpy@GLIBC_2.14 accepts an unversioned definition, never one under a
// version node of ours.
#include <stddef.h>
#include <stdint.h>
#include "dispatch/bind.h"
#include "dispatch/state.h"

#define EXPORT __attribute__((visibility("default")))

#if defined(__x86_64__)
// memcpy, memmove, memset: patched entries (entry_x86_64.cpp).
#include "preload/entry.h"

extern "C" {
// "patched" (jmp rel32 to the variant), "pointer" (jmp through a pointer:
// the system refused the patch), "deferred" (jmp through a pointer until
// the first large copy patches) or "unbound" (not yet bound).
EXPORT const char *uarch_preload_binding(void)
{
	switch (uarch::entry_binding()) {
	case uarch::EntryBinding::patched: return "patched";
	case uarch::EntryBinding::pointer: return "pointer";
	case uarch::EntryBinding::deferred: return "deferred";
	default: return "unbound";
	}
}
}
#else
using uarch::op_memcpy;
using uarch::op_memmove;
using uarch::op_memset;

UARCH_BIND(memcpy, op_memcpy, void *, (void *d, const void *s, size_t n), (d, s, n))
UARCH_BIND(memmove, op_memmove, void *, (void *d, const void *s, size_t n), (d, s, n))
UARCH_BIND(memset, op_memset, void *, (void *d, int c, size_t n), (d, c, n))

extern "C" EXPORT const char *uarch_preload_binding(void) { return "pointer"; }
#endif

extern "C" {

// The C library's fortify failure: prints "*** buffer overflow detected ***"
// and aborts. The one place uarch ends a process, as the contract demands.
[[noreturn]] void __chk_fail(void);

EXPORT void *mempcpy(void *d, const void *s, size_t n)
{
	return static_cast<char *>(uarch::bound_memcpy(d, s, n)) + n;
}

EXPORT void *__mempcpy(void *d, const void *s, size_t n)
{
	return static_cast<char *>(uarch::bound_memcpy(d, s, n)) + n;
}

EXPORT void bzero(void *d, size_t n) { uarch::bound_memset(d, 0, n); }

// The stores must happen although the buffer is dead afterwards: the
// empty asm with d as an input and a memory clobber makes them observable.
EXPORT void explicit_bzero(void *d, size_t n)
{
	uarch::bound_memset(d, 0, n);
	__asm__ __volatile__("" :: "r"(d) : "memory");
}

// _FORTIFY_SOURCE: dstlen is the size of the destination object as the
// compiler knows it. Too small: fail before anything is written.
EXPORT void *__memcpy_chk(void *d, const void *s, size_t n, size_t dstlen)
{
	if (__builtin_expect(dstlen < n, 0))
		__chk_fail();
	return uarch::bound_memcpy(d, s, n);
}

EXPORT void *__memmove_chk(void *d, const void *s, size_t n, size_t dstlen)
{
	if (__builtin_expect(dstlen < n, 0))
		__chk_fail();
	return uarch::bound_memmove(d, s, n);
}

EXPORT void *__memset_chk(void *d, int c, size_t n, size_t dstlen)
{
	if (__builtin_expect(dstlen < n, 0))
		__chk_fail();
	return uarch::bound_memset(d, c, n);
}

EXPORT void *__mempcpy_chk(void *d, const void *s, size_t n, size_t dstlen)
{
	if (__builtin_expect(dstlen < n, 0))
		__chk_fail();
	return static_cast<char *>(uarch::bound_memcpy(d, s, n)) + n;
}

} // extern "C"
