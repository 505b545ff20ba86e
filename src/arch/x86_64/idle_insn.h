// The x86-64 wait instructions, as byte encodings so that no assembler
// flag (-mwaitpkg) or assembler version is needed. Each is executed only
// where CPUID says the CPU has it (stage_runs_on in select).
#pragma once
#include <stdint.h>

namespace uarch::x86 {

// UMONITOR %rax (F3 0F AE /6): arms the monitor on the line holding p.
static inline void umonitor(const void *p)
{
	__asm__ __volatile__(".byte 0xf3, 0x0f, 0xae, 0xf0" :: "a"(p) : "memory");
}

// UMWAIT %ecx (F2 0F AE /6): waits for a store to the monitored line, an
// interrupt, or the TSC deadline in EDX:EAX. ECX bit 0: 1 = C0.1, 0 = C0.2.
// Returns CF: 1 when the OS limit (IA32_UMWAIT_CONTROL) ended the wait.
static inline bool umwait(uint32_t ctrl, uint64_t deadline)
{
	bool cf;
	__asm__ __volatile__(".byte 0xf2, 0x0f, 0xae, 0xf1\n\tsetc %0"
			     : "=q"(cf)
			     : "c"(ctrl), "a"(uint32_t(deadline)), "d"(uint32_t(deadline >> 32))
			     : "memory", "cc");
	return cf;
}

// TPAUSE %ecx (66 0F AE /6): like UMWAIT, with no monitor: only the deadline
// or an interrupt ends it.
static inline bool tpause(uint32_t ctrl, uint64_t deadline)
{
	bool cf;
	__asm__ __volatile__(".byte 0x66, 0x0f, 0xae, 0xf1\n\tsetc %0"
			     : "=q"(cf)
			     : "c"(ctrl), "a"(uint32_t(deadline)), "d"(uint32_t(deadline >> 32))
			     : "memory", "cc");
	return cf;
}

// MONITORX (0F 01 FA): arms the monitor on the line holding RAX; ECX
// (extensions) and EDX (hints) must be 0.
static inline void monitorx(const void *p)
{
	__asm__ __volatile__(".byte 0x0f, 0x01, 0xfa" :: "a"(p), "c"(0), "d"(0) : "memory");
}

// MWAITX (0F 01 FB): waits for a store to the monitored line, an
// interrupt, or, with ECX bit 1, EBX ticks of the TSC's clock. EAX: the
// C-state hint (0xF0: stay in C0).
static inline void mwaitx(uint32_t hint, uint32_t ticks)
{
	__asm__ __volatile__(".byte 0x0f, 0x01, 0xfb" :: "a"(hint), "b"(ticks), "c"(2u) : "memory");
}

static inline uint64_t rdtsc()
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t(hi) << 32) | lo;
}

} // namespace uarch::x86
