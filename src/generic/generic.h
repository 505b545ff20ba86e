// Portable variants: plain C++, correct on any architecture. The reference
// every other variant is tested against is simpler still (a byte loop in
// the tests); these are the floor for architectures without their own.
#pragma once
#include <stddef.h>

extern "C" {
#define HIDDEN __attribute__((visibility("hidden")))
void *uarch_generic_memcpy(void *d, const void *s, size_t n) HIDDEN;
void *uarch_generic_memmove(void *d, const void *s, size_t n) HIDDEN;
void *uarch_generic_memset(void *d, int c, size_t n) HIDDEN;
void uarch_generic_smp_mb(void) HIDDEN;
void uarch_generic_prefetch_range(const void *p, size_t len) HIDDEN;
#undef HIDDEN
}
