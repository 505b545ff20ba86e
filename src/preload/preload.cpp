// The C library's names, for LD_PRELOAD=libuarch_preload.so. They are
// exported unversioned (see preload.map.in): a program that asks for
// memcpy@GLIBC_2.14 accepts an unversioned definition, never one under a
// version node of ours.
#include <stddef.h>
#include <stdint.h>
#include "dispatch/bind.h"
#include "dispatch/libc_names.h"
#include "dispatch/state.h"

#define EXPORT __attribute__((visibility("default")))

// memcpy, memmove, memset: entries whose dynamic symbols are bound at load
// (preload/entry.cpp).
#include "preload/entry.h"

extern "C" {
// How memcpy/memmove/memset reach the variants: "symbols" (their dynamic
// symbols name the variants: the program and every object bound after
// load call them directly), else how the entries, which objects bound
// earlier still call, are bound: "pointer" (a jump through a pointer to
// the variant) or "unbound" (to the portable variants: no state was
// built). uarch_preload_entries() says the entries' alone.
EXPORT const char *uarch_preload_entries(void)
{
	return uarch::entry_binding() == uarch::EntryBinding::pointer ? "pointer" : "unbound";
}

EXPORT const char *uarch_preload_binding(void)
{
	return uarch::symbols_bound() ? "symbols" : uarch_preload_entries();
}
}

// mempcpy, __mempcpy, bzero, explicit_bzero and the _chk forms.
#define UARCH_LIBC_NAME(name, op, form) UARCH_LIBC_##form(, UARCH_LIBC_NO_NOTE, name, op)
#include "table/libc_names.def"
#undef UARCH_LIBC_NAME
