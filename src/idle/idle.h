// The idle wait: spin, then a monitor/wait instruction, then the futex,
// as the policy's stage list says. Every stage re-checks the word, and the
// futex stage is last, so a wake-up is never lost.
#pragma once
#include <stdint.h>
#include "select/plan.h"

namespace uarch {

int idle_wait(const uint32_t *addr, uint32_t expected, int64_t timeout_ns, const IdlePolicy &p)
	__attribute__((visibility("hidden")));
int idle_wake(uint32_t *addr, int count) __attribute__((visibility("hidden")));

} // namespace uarch
