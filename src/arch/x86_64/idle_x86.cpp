// The x86-64 idle stages (UMWAIT, TPAUSE, MONITORX/MWAITX) and the TSC's
// frequency. The PAUSE spin and the futex are in src/idle/idle.cpp.
#include "arch/x86_64/idle_insn.h"
#include "idle/stages.h"
#include "probe/cpu.h"
#include <errno.h>

namespace uarch::idle {

namespace {

uint32_t load(const uint32_t *a) { return __atomic_load_n(a, __ATOMIC_ACQUIRE); }

// A (TSC, CLOCK_MONOTONIC) pair: the TSC at the middle of the narrowest of
// five brackets around the system call, so a preemption or a slow call
// does not skew it.
struct Sample {
	uint64_t tsc;
	int64_t ns;
};

Sample sample()
{
	Sample best = {0, 0};
	uint64_t width = ~uint64_t(0);
	for (int i = 0; i < 5; i++) {
		uint64_t a = x86::rdtsc();
		int64_t ns = mono_now_ns();
		uint64_t b = x86::rdtsc();
		if (b - a < width) {
			width = b - a;
			best = Sample{a + (b - a) / 2, ns};
		}
	}
	return best;
}

// Measures the TSC against CLOCK_MONOTONIC over 50 us. Each end is known to
// a fraction of the system call's 100-350 ns, and both ends err the same
// way, so the result is within about 0.1% (tests check it against
// CLOCK_MONOTONIC over 100 ms). Costs 50 us once per process, on the first
// wait that needs the clock; nothing at load time. A clock that does not
// move (every way to read it refused) ends each window after 10^6 ticks
// instead, which no TSC (20 GHz at most, as below) runs in under 50 us:
// then the guess below.
uint64_t calibrate()
{
	constexpr int64_t window_ns = 50000;
	constexpr uint64_t window_max_ticks = 1000000;
	for (int attempt = 0; attempt < 3; attempt++) {
		Sample a = sample();
		while (mono_now_ns() - a.ns < window_ns && x86::rdtsc() - a.tsc < window_max_ticks)
			;
		Sample b = sample();
		int64_t dns = b.ns - a.ns;
		if (dns <= 0 || b.tsc <= a.tsc)
			continue;
		uint64_t dt = b.tsc - a.tsc;
		uint64_t hz = dns < 1000000000 ? dt * 1000000000 / uint64_t(dns) : dt / (uint64_t(dns) / 1000000000);
		if (hz >= 100000000 && hz <= 20000000000ull)
			return hz;
	}
	return 1000000000;   // never seen; a sane guess keeps budgets finite
}

} // namespace

// Where the TSC's frequency is written down, else measured:
//  1. CPUID 0x15: crystal Hz * EBX / EAX (Intel from Skylake). When the
//     crystal is not enumerated, the base frequency of leaf 0x16, which is
//     the TSC's on those parts (as Linux's native_calibrate_tsc does).
//  2. The hypervisor's leaf 0x40000010 (EAX: TSC kHz; VMware, and KVM/QEMU
//     with invtsc and a known frequency).
//  3. Calibration against CLOCK_MONOTONIC (AMD, most VMs; this machine).
uint64_t detect_clock_hz(ClockSource *src)
{
	const CpuidSource *c = cpuid_hardware();
	uint32_t max = c->cpuid(c, 0, 0).eax;
	if (max >= 0x15 && max < 0x100) {
		CpuidRegs r = c->cpuid(c, 0x15, 0);
		if (r.eax && r.ebx) {
			if (r.ecx) {
				*src = ClockSource::cpuid_15h;
				return uint64_t(r.ecx) * r.ebx / r.eax;
			}
			uint32_t base_mhz = max >= 0x16 ? c->cpuid(c, 0x16, 0).eax & 0xffff : 0;
			if (base_mhz) {
				*src = ClockSource::cpuid_15h;
				return uint64_t(base_mhz) * 1000000;
			}
		}
	}
	if (c->cpuid(c, 1, 0).ecx >> 31) {   // running under a hypervisor
		uint32_t hmax = c->cpuid(c, 0x40000000, 0).eax;
		if (hmax >= 0x40000010 && hmax < 0x40000100) {
			uint32_t khz = c->cpuid(c, 0x40000010, 0).eax;
			if (khz) {
				*src = ClockSource::hypervisor;
				return uint64_t(khz) * 1000;
			}
		}
	}
	*src = ClockSource::calibrated;
	return calibrate();
}

int stage_umwait(const uint32_t *addr, uint32_t expected, uint64_t deadline, bool c01)
{
	uint32_t ctrl = c01 ? 1 : 0;
	for (;;) {
		x86::umonitor(addr);
		// After arming: a store made before UMONITOR would not end UMWAIT.
		if (load(addr) != expected)
			return 0;
		if (x86::rdtsc() >= deadline)
			return ETIMEDOUT;
		// Ends on a store to the line, an interrupt, the deadline, or the
		// OS's cap (CF=1); each way the loop re-arms and re-checks.
		x86::umwait(ctrl, deadline);
	}
}

int stage_tpause(const uint32_t *addr, uint32_t expected, uint64_t deadline, bool c01)
{
	uint32_t ctrl = c01 ? 1 : 0;
	uint64_t slice = ticks_from_ns(tpause_slice_ns);
	for (;;) {
		if (load(addr) != expected)
			return 0;
		uint64_t now = x86::rdtsc();
		if (now >= deadline)
			return ETIMEDOUT;
		uint64_t until = deadline - now > slice ? now + slice : deadline;
		x86::tpause(ctrl, until);
	}
}

int stage_mwaitx(const uint32_t *addr, uint32_t expected, uint64_t deadline, bool c01)
{
	uint32_t hint = c01 ? 0xf0 : 0x00;   // C0, or C1
	for (;;) {
		x86::monitorx(addr);
		if (load(addr) != expected)
			return 0;
		uint64_t now = x86::rdtsc();
		if (now >= deadline)
			return ETIMEDOUT;
		// MWAITX's timer is relative and 32 bits wide (1.7 s at 2.5 GHz):
		// longer waits take several rounds.
		uint64_t left = deadline - now;
		x86::mwaitx(hint, left > 0xffffffffu ? 0xffffffffu : uint32_t(left));
	}
}

int stage_of_arch(Stage s, const uint32_t *addr, uint32_t expected, uint64_t deadline, bool c01)
{
	switch (s) {
	case Stage::umwait: return stage_umwait(addr, expected, deadline, c01);
	case Stage::tpause: return stage_tpause(addr, expected, deadline, c01);
	case Stage::mwaitx: return stage_mwaitx(addr, expected, deadline, c01);
	default: return stage_spin(addr, expected, deadline);
	}
}

} // namespace uarch::idle
