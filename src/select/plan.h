// The policy's answer for one CPU: which variant each op binds to and the
// thresholds the variants follow. Plain data, computed by select_plan().
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "probe/cpu.h"
#include "table/table.h"
#include "tunables/tunables.h"

namespace uarch {

// Ops and variants (Op, Impl, impl_runs_on) come from table/ops.def.

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

// Every threshold the policy derives from the cache sizes is at least this
// large, so below it the plan made without the caches (at binding) already
// decides as the complete one will: the variants ask for the caches only
// at the first copy or fill of this size (deferral_test checks the rule on
// every CPUID dump). Thresholds set by tunables are not derived.
constexpr uint64_t caches_matter_from = 256u << 10;

struct MemThresholds {
	uint64_t movsb_min, movsb_max;   // rep movsb window (0,0: never)
	uint64_t stosb_min, stosb_max;   // rep stosb window
	uint64_t nt_min;                 // non-temporal stores from here (0: never)
	uint32_t prefetch_stride;        // prefetch_range: bytes between prefetches
	uint32_t prefetch_distance;      // arm64 AmpereOne copy: prfm distance
	uint64_t prefetch_copy_min;      // arm64 AmpereOne copy: prefetching loop from here (0: never)
	// Fills of a byte other than 0: non-temporal from here (0: never).
	// Zero fills follow nt_min: streaming zeros can be much faster than
	// streaming any other byte
	// (docs/measurements/policy-evidence.md#zen4-nonzero-fills).
	uint64_t nt_fill_min;
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

// The plan in two steps: plan_defaults, a function of the CPU and the rule
// tables alone, then apply_tunables, which changes the plan entry by entry
// or marks an entry refused (the ERMS rule and closed windows last,
// whatever an entry said). select_plan takes away the features the
// tunables mask before both.
void plan_defaults(const Cpu &cpu, Plan *out);
void apply_tunables(const Tunables &t, const Cpu &cpu, Plan *p);
void select_plan(const Cpu &cpu, const Tunables &t, Plan *out);

} // namespace uarch
