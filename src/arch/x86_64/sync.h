// x86-64 barriers and prefetches as exported, dispatchable functions.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "generic/prefetch_blocks.h"

#define UARCH_SYNC_HIDDEN __attribute__((visibility("hidden")))

extern "C" {
void uarch_x86_64_smp_mb_lock_add(void) UARCH_SYNC_HIDDEN;
void uarch_x86_64_smp_mb_mfence(void) UARCH_SYNC_HIDDEN;
void uarch_x86_64_prefetch_range_t0(const void *p, size_t len) UARCH_SYNC_HIDDEN;
void uarch_x86_64_prefetchw_w(const void *p) UARCH_SYNC_HIDDEN;
void uarch_x86_64_prefetchw_t0(const void *p) UARCH_SYNC_HIDDEN;
}


#undef UARCH_SYNC_HIDDEN
