// arm64 barriers and prefetches as exported, dispatchable functions.
//
// cpu_relax is `yield` (uarch.h, bind.cpp), as in Linux's arm64 cpu_relax.
// On most cores without SMT yield retires as a NOP, so a spin loop polls as
// fast as it can; some projects (Rust's spin_loop hint, several databases'
// spin locks) use `isb` instead, which stalls for the pipeline refill and
// so slows polling on Neoverse N1/V1-class cores. Which is better depends on
// the core and the contention; nothing about it has been measured on arm64
// hardware for this library (it has only run under qemu-user), so the
// kernel's choice stays.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "generic/prefetch_blocks.h"

extern "C" {
#define HIDDEN __attribute__((visibility("hidden")))
void uarch_aarch64_smp_mb_dmb(void) HIDDEN;                               // dmb ish
void uarch_aarch64_prefetch_range_prfm(const void *p, size_t len) HIDDEN;  // prfm pldl1keep per stride
void uarch_aarch64_prefetchw_prfm(const void *p) HIDDEN;                  // prfm pstl1keep
#undef HIDDEN
}

