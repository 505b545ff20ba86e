// The policy's answer for one CPU: which variant each op binds to and the
// thresholds the variants follow. Plain data, computed by select_plan().
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "probe/cpu.h"
#include "tunables/tunables.h"

namespace uarch {

enum Op : uint8_t {
	op_memcpy, op_memmove, op_memset, op_prefetch_range, op_prefetchw, op_smp_mb,
	op_idle_wait, op_count
};
const char *op_name(uint32_t op);             // "memcpy", ...; nullptr past op_count
bool op_from_name(const char *s, size_t len, Op *out);

// Every variant of every op, across architectures. impl_name() is the string
// uarch_impl() returns and UARCH_TUNABLES accepts.
enum class Impl : uint8_t {
	none,
	generic,     // portable C, any architecture
	baseline,    // the architecture's floor: SSE2 on x86-64, ASIMD on arm64
	gpr,         // x86-64: unrolled general-register moves (seed 001)
	avx2,        // x86-64
	avx512,      // x86-64: AVX512F+BW+VL with BMI2
	ampereone,   // arm64: 128-byte loop with prfm pldl2keep 2 KiB ahead (seed 002)
	mops,        // arm64: FEAT_MOPS cpyp/cpym/cpye, setp/setm/sete
	lock_add,    // x86-64 smp_mb: lock addl below the red zone (seed 003)
	mfence,      // x86-64 smp_mb, for comparison only
	dmb,         // arm64 smp_mb: dmb ish
	prefetcht0,  // x86-64 prefetch_range / prefetchw fallback
	prefetchw,   // x86-64 prefetchw
	prfm,        // arm64 prfm
	policy,      // idle_wait: the staged policy (stages in IdlePolicy)
	count
};
const char *impl_name(Impl i);
bool impl_from_name(const char *s, size_t len, Impl *out);

// Can this CPU run this variant of this op? (The policy never binds, and
// tests never call, a variant for which this is false.)
bool impl_runs_on(Op op, Impl impl, const Cpu &cpu);

// Idle-wait stages, in the order the policy may use them.
enum class Stage : uint8_t { spin, umwait, tpause, mwaitx, wfe, wfet, futex, count };
const char *stage_name(Stage s);
bool stage_from_name(const char *s, size_t len, Stage *out);
bool stage_runs_on(Stage s, const Cpu &cpu);

struct IdlePolicy {
	Stage stages[4];
	uint8_t nstages;
	uint32_t spin_ns;      // how long the PAUSE/yield spin lasts
	uint32_t monitor_ns;   // how long the monitor-wait stage lasts before the futex
	uint8_t umwait_c01;    // 1: UMWAIT/TPAUSE in C0.1 (faster wake), 0: C0.2
};

struct MemThresholds {
	uint64_t movsb_min, movsb_max;   // rep movsb window (0,0: never)
	uint64_t stosb_min, stosb_max;   // rep stosb window
	uint64_t nt_min;                 // non-temporal stores from here (0: never)
	uint32_t prefetch_stride;        // prefetch_range: bytes between prefetches
	uint32_t prefetch_distance;      // arm64 AmpereOne copy: prfm distance
	uint64_t prefetch_copy_min;      // arm64 AmpereOne copy: prefetching loop from here (0: never)
};

struct Plan {
	Impl impl[op_count];
	MemThresholds mem;
	IdlePolicy idle;
	// Tunables the policy refused although they parsed (a variant this CPU
	// cannot run, a stage it lacks): bit i = tunables entry i.
	uint32_t refused;
	uint8_t refused_reason[Tunables::max_entries];
};

enum RefuseReason : uint8_t {
	refuse_none, refuse_unknown_variant, refuse_not_for_op, refuse_cpu_lacks, refuse_bad_stage,
};
const char *refuse_reason_text(uint8_t r);

void select_plan(const Cpu &cpu, const Tunables &t, Plan *out);

} // namespace uarch
