// Hands the plan's thresholds to the variants of this architecture. Called
// once by the binder before any variant is published.
#pragma once
#include "select/plan.h"

namespace uarch {
void set_arch_params(const Plan &plan) __attribute__((visibility("hidden")));

// x86-64: the plan given to set_arch_params was made without the caches
// (see probe_x86_binding): the variants' large-size paths complete it on
// their first call, through finish_deferred_plan(), which calls
// set_arch_params again.
void defer_arch_params() __attribute__((visibility("hidden")));
// In the binder (state.cpp): probes the caches (CPUID), re-plans,
// set_arch_params; false, and nothing done, while no state is published.
// Idempotent, lock-free, async-signal-safe, no system call: any thread may
// run it, at once.
bool finish_deferred_plan() __attribute__((visibility("hidden")));
}
