// The idle wait: spin, then a monitor/wait instruction, then the futex,
// as the policy's stage list says (src/idle/stages.h has the stages).
//
// idle_wait: 0 once *addr != expected was seen or a wake arrived (which may
// be spurious: callers re-check), ETIMEDOUT once timeout_ns has passed by
// CLOCK_MONOTONIC (never earlier; < 0: no timeout; 0: only a check),
// EINVAL for a NULL or misaligned addr. Every stage re-checks the word
// after arming itself, and the futex stage is last and counts its sleepers,
// so a store followed by idle_wake is never slept through.
//
// idle_wake: call after storing a new value; wakes up to count sleepers
// (count < 0 or INT_MAX: all; 0: none) and returns how many the kernel
// woke. A full barrier and one load when nobody sleeps in the futex stage
// for the address's bucket: no system call.
//
// idle_wait_shared / idle_wake_shared: the same on a uarch_idle_word (see
// uarch.h), whose sleeper count lives next to the word and whose futex is
// keyed by the page, not the process: waiter and waker may be in different
// processes or different copies of the library. EINVAL (wait) or -EINVAL
// (wake) for a NULL or not 8-aligned word.
//
// Both waits learn their spin budget per address (src/idle/budget.h).
#pragma once
#include <stdint.h>
#include "select/plan.h"

struct uarch_idle_word;

namespace uarch {

int idle_wait(const uint32_t *addr, uint32_t expected, int64_t timeout_ns, const IdlePolicy &p)
	__attribute__((visibility("hidden")));
int idle_wake(uint32_t *addr, int count) __attribute__((visibility("hidden")));
int idle_wait_shared(uarch_idle_word *w, uint32_t expected, int64_t timeout_ns, const IdlePolicy &p)
	__attribute__((visibility("hidden")));
int idle_wake_shared(uarch_idle_word *w, int count) __attribute__((visibility("hidden")));

} // namespace uarch
