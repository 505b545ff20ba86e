// The arm64 room of the idle wait (src/idle/stages.h): its clock's rate,
// and the monitor-wait stages WFE, and WFET where FEAT_WFxT exists
// (HWCAP2_WFXT).
//
// LDAXR loads the word (with acquire order, so a caller that sees the new
// value also sees what was stored before it) and arms this CPU's exclusive
// monitor for the word's reservation granule. A store by another CPU to
// that granule clears the monitor, and clearing it is a wake-up event for
// WFE - also when the store lands between the LDAXR and the WFE: the event
// is latched and the WFE returns at once. So a store to the word is never
// slept through. Every other return from WFE - the kernel's event stream
// (HWCAP_EVTSTRM, every 100 us on Linux), an interrupt, a SEV, a store to
// a neighbour in the granule, an event left over from earlier - is
// spurious: the loop re-checks the word and the deadline. Without the event
// stream only stores and interrupts wake a WFE, so the stage can overrun its
// deadline by up to a timer tick; the policy (arm_plan) uses it only where
// HWCAP_EVTSTRM is set.
//
// Under qemu-user WFE is a no-op and this is a spin on LDAXR: correct, not
// a model of the hardware's timing. No arm64 hardware has run it yet.
#include <errno.h>
#include "idle/stages.h"

namespace uarch::idle {

namespace {
inline uint32_t load_and_arm(const uint32_t *addr)
{
	uint32_t v;
	__asm__ __volatile__("ldaxr %w0, [%1]" : "=r"(v) : "r"(addr) : "memory");
	return v;
}
} // namespace

// The idle clock's rate: the generic timer says it (cntfrq_el0).
uint64_t detect_clock_hz(ClockSource *src)
{
	*src = ClockSource::architectural;
	return arch::reported_tick_hz();
}

int stage_wfe(const uint32_t *addr, uint32_t expected, uint64_t deadline)
{
	for (;;) {
		if (load_and_arm(addr) != expected)
			return 0;
		if (clock_now() >= deadline)
			return ETIMEDOUT;
		__asm__ __volatile__("wfe" ::: "memory");
	}
}

// WFET Xt also wakes once CNTVCT_EL0 (the idle clock) reaches Xt, so the
// stage ends on time without the event stream. Written as .inst (WFET x17 =
// 0xd5031000 | 17) because assemblers before binutils 2.38 and clang 14
// without -march=armv8.7-a do not know the mnemonic. Only called where
// HWCAP2_WFXT is set (stage_runs_on); elsewhere it is an undefined
// instruction (qemu-aarch64 7.2 does not implement it).
int stage_wfet(const uint32_t *addr, uint32_t expected, uint64_t deadline)
{
	for (;;) {
		if (load_and_arm(addr) != expected)
			return 0;
		if (clock_now() >= deadline)
			return ETIMEDOUT;
		register uint64_t x17 __asm__("x17") = deadline;
		__asm__ __volatile__(".inst 0xd5031011" :: "r"(x17) : "memory");
	}
}

int stage_of_arch(Stage s, const uint32_t *addr, uint32_t expected, uint64_t deadline, bool)
{
	switch (s) {
	case Stage::wfe: return stage_wfe(addr, expected, deadline);
	case Stage::wfet: return stage_wfet(addr, expected, deadline);
	default: return stage_spin(addr, expected, deadline);
	}
}

} // namespace uarch::idle
