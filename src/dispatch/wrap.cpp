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
#include "dispatch/libc_names.h"
#include "dispatch/state.h"

using uarch::op_memcpy;
using uarch::op_memmove;
using uarch::op_memset;

UARCH_BIND(__wrap_memcpy, op_memcpy, void *, (void *d, const void *s, size_t n), (d, s, n))
UARCH_BIND(__wrap_memmove, op_memmove, void *, (void *d, const void *s, size_t n), (d, s, n))
UARCH_BIND(__wrap_memset, op_memset, void *, (void *d, int c, size_t n), (d, c, n))

// mempcpy, bzero, explicit_bzero and the _chk forms, as __wrap_*.
#define UARCH_LIBC_NAME(name, op, form) UARCH_LIBC_##form(__wrap_, UARCH_LIBC_NO_NOTE, name, op)
#include "table/libc_names.def"
#undef UARCH_LIBC_NAME
