// The idle-wait stages, each a named mechanism that idle_wait() strings
// together as the policy says and that tests and uarch-bench call directly.
//
// Every stage watches one 32-bit word: it returns 0 as soon as it sees
// *addr != expected (a futex stage also on a wake), and ETIMEDOUT once its
// deadline has passed. A stage is only ever called on a CPU that has its
// instruction (stage_runs_on() in select); calling it elsewhere faults.
//
// Two clocks:
//  - the idle clock (clock_now): cheap, monotonic and the same on every CPU
//    of the machine; the TSC on x86-64 (invariant TSC assumed, as Linux's
//    tsc clocksource does), CNTVCT_EL0 on arm64, CLOCK_MONOTONIC in ns
//    elsewhere. Spin and monitor stages take absolute deadlines in it.
//  - CLOCK_MONOTONIC (mono_now_ns): the futex stage's absolute deadline, and
//    the final word on every timeout, so a wait never times out early even
//    when the idle clock's frequency is only estimated.
#pragma once
#include <stdint.h>
#include "arch/primitives.h"
#include "select/plan.h"

#define UARCH_IDLE_HIDDEN __attribute__((visibility("hidden")))

namespace uarch {
struct IdlePolicy;
}

namespace uarch::idle {

// ---- the idle clock ------------------------------------------------------
// CLOCK_MONOTONIC in ns, by a raw system call (slow: 100 to 350 ns; only on
// paths that sleep or time out anyway).
int64_t mono_now_ns() UARCH_IDLE_HIDDEN;

// Idle-clock ticks now.
static inline uint64_t clock_now() { return arch::ticks(); }

// How far the clock jumps when it moves, in ns (one tick on hardware;
// under qemu-user, 62-63 ticks at once).
uint64_t clock_step_ns() UARCH_IDLE_HIDDEN;

// Conversions at the clock's frequency (found or calibrated on first use):
// ticks_from_ns rounds up and saturates at UINT64_MAX; ns_from_ticks rounds
// down. The frequency may be off by a fraction of a per cent (calibrated),
// which is why timeouts are confirmed against CLOCK_MONOTONIC.
uint64_t ticks_from_ns(uint64_t ns) UARCH_IDLE_HIDDEN;
uint64_t ns_from_ticks(uint64_t ticks) UARCH_IDLE_HIDDEN;
// The frequency in Hz, and where it came from (for uarch-info and tests).
enum class ClockSource : uint8_t { unknown, cpuid_15h, hypervisor, calibrated, architectural, nanoseconds };
uint64_t clock_hz(ClockSource *src = nullptr) UARCH_IDLE_HIDDEN;
const char *clock_source_name(ClockSource s) UARCH_IDLE_HIDDEN;

// The frequency as the architecture knows it, or measured (slow, the first
// time only: clock_hz() caches it). x86-64: src/arch/x86_64/idle_x86.cpp;
// arm64 (CNTFRQ_EL0) and others: src/idle/idle.cpp.
uint64_t detect_clock_hz(ClockSource *src) UARCH_IDLE_HIDDEN;

static inline void cpu_relax() { arch::cpu_relax(); }

// ---- stages ----------------------------------------------------------------
// deadline: absolute, in idle-clock ticks (UINT64_MAX: none).

// PAUSE spin, bounded by the clock (PAUSE takes 10 to 140 cycles depending
// on the core, so an iteration count says nothing about time).
int stage_spin(const uint32_t *addr, uint32_t expected, uint64_t deadline) UARCH_IDLE_HIDDEN;

// x86-64 WAITPKG: UMONITOR the word's line, then UMWAIT until a store to
// it or the deadline; re-armed in a loop, since the OS caps each wait
// (IA32_UMWAIT_CONTROL, /sys/devices/system/cpu/umwait_control/max_time).
// c01: 1 asks for C0.1 (faster wake), 0 for C0.2 (deeper, frees SMT
// resources, may be refused by the OS, which then uses C0.1).
int stage_umwait(const uint32_t *addr, uint32_t expected, uint64_t deadline, bool c01) UARCH_IDLE_HIDDEN;
// x86-64 WAITPKG: TPAUSE in slices of tpause_slice_ns (it watches no
// address, so each slice is the latency it may add).
constexpr uint32_t tpause_slice_ns = 1000;
int stage_tpause(const uint32_t *addr, uint32_t expected, uint64_t deadline, bool c01) UARCH_IDLE_HIDDEN;
// AMD MONITORX/MWAITX, with MWAITX's own timer (a count relative to now,
// EBX, enabled by ECX bit 1). c01: 1 stays in C0 (hint 0xF0, as Linux's
// delay loop), 0 allows C1 (hint 0).
int stage_mwaitx(const uint32_t *addr, uint32_t expected, uint64_t deadline, bool c01) UARCH_IDLE_HIDDEN;

// arm64 WFE / WFET: src/arch/aarch64/idle_wfe.cpp. Same contract as the
// others: WFE wakes on the event stream and on any write to the monitored
// granule (LDAXR arms it); spurious wakes are expected, so loop and
// re-check.
int stage_wfe(const uint32_t *addr, uint32_t expected, uint64_t deadline) UARCH_IDLE_HIDDEN;
int stage_wfet(const uint32_t *addr, uint32_t expected, uint64_t deadline) UARCH_IDLE_HIDDEN;

// Stage s of this architecture (umwait, tpause, mwaitx; wfe, wfet), the
// spin for any other: each architecture's room defines it.
int stage_of_arch(Stage s, const uint32_t *addr, uint32_t expected, uint64_t deadline, bool c01) UARCH_IDLE_HIDDEN;

// FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG with an absolute CLOCK_MONOTONIC
// deadline (mono_deadline_ns < 0: none), counted in the waiter table so
// that idle_wake knows whether a system call is needed. Returns 0 when the
// value differs or a wake arrived (possibly spurious), ETIMEDOUT.
int stage_futex(const uint32_t *addr, uint32_t expected, int64_t mono_deadline_ns) UARCH_IDLE_HIDDEN;
// The same with the sleeper counted in *sleepers; shared: without
// FUTEX_PRIVATE_FLAG, so that a waker in another process (mapping the same
// page) or another copy of the library meets this sleeper.
int stage_futex_on(const uint32_t *addr, uint32_t expected, int64_t mono_deadline_ns, uint32_t *sleepers,
		   bool shared) UARCH_IDLE_HIDDEN;

// ---- test hooks -------------------------------------------------------------
// System calls made by the futex stage and by idle_wake. Incremented
// (relaxed) only on the system-call paths, so they cost nothing elsewhere.
struct Stats {
	uint64_t futex_waits;   // FUTEX_WAIT calls
	uint64_t futex_wakes;   // FUTEX_WAKE calls
};
Stats stats() UARCH_IDLE_HIDDEN;
// Sleepers counted for addr's bucket right now.
uint32_t sleepers(const uint32_t *addr) UARCH_IDLE_HIDDEN;
// The spin budget learnt for addr (known == false: none yet, the cap), and
// a reset of every learnt budget (tests that need the cap again).
struct SpinState;
SpinState learnt(const uint32_t *addr) UARCH_IDLE_HIDDEN;
void forget_learnt() UARCH_IDLE_HIDDEN;
// The bucket of the learnt table that holds addr's entry (tests).
unsigned learn_bucket(const uint32_t *addr) UARCH_IDLE_HIDDEN;
// idle_wait with the policy's spin_ns as a fixed budget, learning nothing
// (uarch-bench's "fixed budget" column, the behaviour before learning).
int wait_fixed_budget(const uint32_t *addr, uint32_t expected, int64_t timeout_ns, const IdlePolicy &p)
	UARCH_IDLE_HIDDEN;

} // namespace uarch::idle
