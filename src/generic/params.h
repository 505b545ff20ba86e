// Hands the plan's thresholds to the variants of this architecture. Called
// by the binder before any variant is published, and again at load once
// the cache sizes are known (state.h: complete_plan_at_load).
#pragma once
#include "select/plan.h"

namespace uarch {
void set_arch_params(const Plan &plan) __attribute__((visibility("hidden")));
}
