// GNU ld's --wrap=NAME for statically linked programs: with
// -Wl,--wrap=memcpy every undefined reference to memcpy in every object
// of the link (the program's, other static libraries', the C library's)
// goes to __wrap_memcpy instead. Linked into libuarch.a only; the flags
// come from `pkg-config --variable=wrap_ldflags uarch` and the CMake
// target uarch::wrap.
//
// memcpy, memmove and memset are bound like uarch_memcpy & co (an ifunc
// with the binding 'ifunc': a call reaches the variant with no jump in
// between); the other names call them and add their own contract.
#include <stddef.h>
#include <stdint.h>
#include "dispatch/bind.h"
#include "dispatch/state.h"

using uarch::op_memcpy;
using uarch::op_memmove;
using uarch::op_memset;

UARCH_BIND(__wrap_memcpy, op_memcpy, void *, (void *d, const void *s, size_t n), (d, s, n))
UARCH_BIND(__wrap_memmove, op_memmove, void *, (void *d, const void *s, size_t n), (d, s, n))
UARCH_BIND(__wrap_memset, op_memset, void *, (void *d, int c, size_t n), (d, c, n))

#define EXPORT __attribute__((visibility("default")))

extern "C" {

// The C library's fortify failure (prints and aborts).
[[noreturn]] void __chk_fail(void);

EXPORT void *__wrap_mempcpy(void *d, const void *s, size_t n)
{
	return static_cast<char *>(uarch::bound_memcpy(d, s, n)) + n;
}

EXPORT void *__wrap___mempcpy(void *d, const void *s, size_t n)
{
	return static_cast<char *>(uarch::bound_memcpy(d, s, n)) + n;
}

EXPORT void __wrap_bzero(void *d, size_t n) { uarch::bound_memset(d, 0, n); }

// The stores must happen although the buffer is dead afterwards.
EXPORT void __wrap_explicit_bzero(void *d, size_t n)
{
	uarch::bound_memset(d, 0, n);
	__asm__ __volatile__("" :: "r"(d) : "memory");
}

EXPORT void *__wrap___memcpy_chk(void *d, const void *s, size_t n, size_t dstlen)
{
	if (__builtin_expect(dstlen < n, 0))
		__chk_fail();
	return uarch::bound_memcpy(d, s, n);
}

EXPORT void *__wrap___memmove_chk(void *d, const void *s, size_t n, size_t dstlen)
{
	if (__builtin_expect(dstlen < n, 0))
		__chk_fail();
	return uarch::bound_memmove(d, s, n);
}

EXPORT void *__wrap___memset_chk(void *d, int c, size_t n, size_t dstlen)
{
	if (__builtin_expect(dstlen < n, 0))
		__chk_fail();
	return uarch::bound_memset(d, c, n);
}

EXPORT void *__wrap___mempcpy_chk(void *d, const void *s, size_t n, size_t dstlen)
{
	if (__builtin_expect(dstlen < n, 0))
		__chk_fail();
	return static_cast<char *>(uarch::bound_memcpy(d, s, n)) + n;
}

} // extern "C"
