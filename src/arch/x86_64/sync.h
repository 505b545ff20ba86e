// x86-64 barriers and prefetches as exported, dispatchable functions.
#pragma once
#include <stddef.h>

extern "C" {
#define HIDDEN __attribute__((visibility("hidden")))
void uarch_x86_64_smp_mb_lock_add(void) HIDDEN;
void uarch_x86_64_smp_mb_mfence(void) HIDDEN;
void uarch_x86_64_prefetch_range_t0(const void *p, size_t len) HIDDEN;
void uarch_x86_64_prefetchw_w(const void *p) HIDDEN;
void uarch_x86_64_prefetchw_t0(const void *p) HIDDEN;
#undef HIDDEN
}
