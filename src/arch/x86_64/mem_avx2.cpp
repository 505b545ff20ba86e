// Placeholder: forwards to the portable variant until the avx2 strategy lands.
#include "arch/x86_64/mem.h"
#include "generic/generic.h"

void *uarch_x86_64_memcpy_avx2(void *d, const void *s, size_t n) { return uarch_generic_memmove(d, s, n); }
void *uarch_x86_64_memmove_avx2(void *d, const void *s, size_t n) { return uarch_generic_memmove(d, s, n); }
void *uarch_x86_64_memset_avx2(void *d, int c, size_t n) { return uarch_generic_memset(d, c, n); }
