// The architecture's sync variants and prefetch_range helpers (the same
// contract on x86-64 and arm64: for_each_prefetch_block, set_prefetch_stride,
// prefetch_stride_shift), and its prefetch_range variant by name.
#pragma once
#if defined(__x86_64__)
#include "arch/x86_64/sync.h"
#define SYNC_TEST_HAVE_ARCH 1
#define SYNC_TEST_RANGE_VARIANT uarch_x86_64_prefetch_range_t0
#define SYNC_TEST_RANGE_NAME "uarch_x86_64_prefetch_range_t0"
#elif defined(__aarch64__)
#include "arch/aarch64/sync.h"
#define SYNC_TEST_HAVE_ARCH 1
#define SYNC_TEST_RANGE_VARIANT uarch_aarch64_prefetch_range_prfm
#define SYNC_TEST_RANGE_NAME "uarch_aarch64_prefetch_range_prfm"
#else
#define SYNC_TEST_HAVE_ARCH 0
#endif
