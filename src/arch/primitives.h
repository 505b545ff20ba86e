// The architecture's one door for the shared rooms (idle, record): the
// tick clock, a spin step and the barriers. Nothing outside src/arch
// and src/probe needs an #if on the architecture for these.
//
// The tick clock: the cheapest monotonic counter every CPU of a machine
// shares, read without a system call. x86-64: the TSC (invariant on the
// CPUs uarch binds for; its rate is timed against CLOCK_MONOTONIC by who
// needs it). arm64: the generic timer's virtual count, whose rate the
// CPU reports (cntfrq_el0). Used by the idle waits' deadlines and by the
// recorder's trace.
#pragma once
#include <stdint.h>
#if defined(__x86_64__)
#include "arch/x86_64/sync.h"
#elif defined(__aarch64__)
#include "arch/aarch64/sync.h"
#endif

namespace uarch::arch {

static inline uint64_t ticks()
{
#if defined(__x86_64__)
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));   // not serialising: deadlines and gaps, not cycles
	return (uint64_t(hi) << 32) | lo;
#elif defined(__aarch64__)
	uint64_t v;
	__asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
	return v;
#else
#error "uarch: the tick clock is written for x86-64 and arm64 only"
#endif
}

// The ticks' rate where the CPU reports it (arm64), else 0: time it.
static inline uint64_t reported_tick_hz()
{
#if defined(__aarch64__)
	uint64_t f;
	__asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(f));
	return f;
#else
	return 0;
#endif
}

// One step of a spin: PAUSE on x86-64, YIELD on arm64.
static inline void cpu_relax()
{
#if defined(__x86_64__)
	__asm__ __volatile__("pause" ::: "memory");
#else
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

// The barriers uarch.h inlines (its forms, as functions): a compiler
// barrier on x86-64, whose loads and stores are not reordered with their
// own kind; dmb ishld / ishst on arm64.
static inline void smp_rmb()
{
#if defined(__x86_64__)
	__asm__ __volatile__("" ::: "memory");
#else
	__asm__ __volatile__("dmb ishld" ::: "memory");
#endif
}

static inline void smp_wmb()
{
#if defined(__x86_64__)
	__asm__ __volatile__("" ::: "memory");
#else
	__asm__ __volatile__("dmb ishst" ::: "memory");
#endif
}

// A prefetch for reading into every cache level.
static inline void prefetch(const void *p)
{
#if defined(__x86_64__)
	__asm__ __volatile__("prefetcht0 (%0)" ::"r"(p));
#else
	__asm__ __volatile__("prfm pldl1keep, [%0]" ::"r"(p));
#endif
}

// A full barrier: the library's own smp_mb variant (seed 003's locked add
// on x86-64, dmb ish on arm64), not another copy of its asm.
static inline void full_fence()
{
#if defined(__x86_64__)
	uarch_x86_64_smp_mb_lock_add();
#else
	uarch_aarch64_smp_mb_dmb();
#endif
}

// After an atomic read-modify-write that must also order the loads after
// it: x86-64's locked instructions are full barriers already; arm64's
// LDADDAL orders less.
static inline void fence_after_rmw()
{
#if !defined(__x86_64__)
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

} // namespace uarch::arch
