// Hands the plan's thresholds to the variants of this architecture. Called
// once by the binder before any variant is published.
#pragma once
#include "select/plan.h"

namespace uarch {
void set_arch_params(const Plan &plan) __attribute__((visibility("hidden")));
}
