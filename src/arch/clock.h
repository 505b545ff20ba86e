// The tick clock: the cheapest monotonic counter every CPU of a machine
// shares, read without a system call. x86-64: the TSC (invariant on the
// CPUs uarch binds for; its rate is timed against CLOCK_MONOTONIC by who
// needs it). arm64: the generic timer's virtual count, whose rate the
// CPU reports (cntfrq_el0). Used by the idle waits' deadlines and by the
// recorder's trace.
#pragma once
#include <stdint.h>

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

} // namespace uarch::arch
