// The idle clock (stages.h): the tick clock of src/arch/primitives.h, its
// rate found once (each architecture's room says how), and conversions.
#include <errno.h>
#include <time.h>
#include "idle/stages.h"
#include "sys/sys.h"
#pragma weak clock_gettime

namespace uarch::idle {

namespace {

// The frequency of the idle clock, found once (see clock_hz).
struct alignas(64) Freq {
	uint64_t hz;             // 0 until known; published last, with release
	uint64_t ticks_per_ns;   // Q32.32
	uint64_t ns_per_tick;    // Q32.32
	uint64_t step_ns;        // the clock's observed step (see freq)
	uint8_t src;             // a ClockSource (clang's __atomic builtins take no enums)
};
Freq g_freq;

uint64_t mul_q32(uint64_t a, uint64_t q, bool round_up)
{
	unsigned __int128 p = (unsigned __int128)a * q;
	if (round_up)
		p += 0xffffffffu;
	p >>= 32;
	return p > ~uint64_t(0) ? ~uint64_t(0) : uint64_t(p);
}

const Freq &freq()
{
	if (__atomic_load_n(&g_freq.hz, __ATOMIC_ACQUIRE))
		return g_freq;
	// Threads that race here each detect; the results agree to a fraction
	// of a per cent and any of them is good.
	ClockSource src = ClockSource::unknown;
	uint64_t hz = detect_clock_hz(&src);
	if (hz < 1000000 || hz > (uint64_t(1) << 35))
		hz = 1000000000;   // a broken source: keep the arithmetic sane
	// hz * 2^32 / 10^9 without a 128-bit division: in two steps of 2^22
	// and 2^10 (hz < 2^35, so hz << 22 fits).
	uint64_t q = (hz << 22) / 1000000000, r = (hz << 22) % 1000000000;
	__atomic_store_n(&g_freq.ticks_per_ns, (q << 10) + (r << 10) / 1000000000, __ATOMIC_RELAXED);
	__atomic_store_n(&g_freq.ns_per_tick, (uint64_t(1000000000) << 32) / hz, __ATOMIC_RELAXED);
	// How far the clock jumps when it moves: two reads one step apart may
	// lie barely apart in time. One tick on hardware (or a read's own
	// latency, with the TSC); under qemu-user the counter follows the
	// host's microsecond clock and moves 62-63 ticks of 62.5 MHz at once,
	// which let a 1 us timeout return 69 ns early. The largest of two
	// whole steps, each taken from a change to the next change.
	uint64_t step = 0, a = clock_now(), b = a;
	for (int k = 0; k < 3; k++) {
		for (uint32_t i = 0; i < (1u << 24) && (b = clock_now()) == a; i++)
			__asm__ volatile("" ::: "memory");
		if (k && b - a > step)
			step = b - a;
		a = b;
	}
	__atomic_store_n(&g_freq.step_ns, mul_q32(step, (uint64_t(1000000000) << 32) / hz, true), __ATOMIC_RELAXED);
	__atomic_store_n(&g_freq.src, uint8_t(src), __ATOMIC_RELAXED);
	__atomic_store_n(&g_freq.hz, hz, __ATOMIC_RELEASE);
	return g_freq;
}

} // namespace

// The C library's clock_gettime reads the clock in the vDSO, with no system
// call for a seccomp filter to refuse (a filter that lists the calls a
// program makes has no reason to list one its libc never makes); weak, so
// that the library itself asks the C library for nothing it might lack.
// Else, or where the vDSO falls back to a refused call, the raw call.
int64_t mono_now_ns()
{
	timespec ts = {0, 0};   // stays 0 if a sandbox refuses the call
	if (!clock_gettime || clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		sys::call6(sys::nr_clock_gettime, CLOCK_MONOTONIC, long(&ts));
	return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

uint64_t clock_hz(ClockSource *src)
{
	const Freq &f = freq();
	if (src)
		*src = ClockSource(__atomic_load_n(&f.src, __ATOMIC_RELAXED));
	return f.hz;
}

uint64_t ticks_from_ns(uint64_t ns)
{
	return mul_q32(ns, __atomic_load_n(&freq().ticks_per_ns, __ATOMIC_RELAXED), true);
}

uint64_t ns_from_ticks(uint64_t ticks)
{
	return mul_q32(ticks, __atomic_load_n(&freq().ns_per_tick, __ATOMIC_RELAXED), false);
}

const char *clock_source_name(ClockSource s)
{
	switch (s) {
	case ClockSource::cpuid_15h: return "cpuid 0x15";
	case ClockSource::hypervisor: return "hypervisor leaf 0x40000010";
	case ClockSource::calibrated: return "calibrated";
	case ClockSource::architectural: return "cntfrq_el0";
	case ClockSource::nanoseconds: return "clock_gettime";
	default: return "unknown";
	}
}

// detect_clock_hz: src/arch/<arch>/idle_*.cpp.

uint64_t clock_step_ns() { return __atomic_load_n(&freq().step_ns, __ATOMIC_RELAXED); }

} // namespace uarch::idle
