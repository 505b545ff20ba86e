// The learning spin budget: how long the spin stage of a wait on one address
// lasts, learnt from the waits on that address before it.
//
// The rule (after Linux's cpuidle haltpoll governor). Each address has a
// budget b, 0..cap, where cap is the policy's spin_ns (idle_spin_ns) and
// also b's first value. A wait spins for b, then goes on to the next
// stages. Once it is over, its time t (start to return) moves b:
//  - t <= b: the spin caught the change; b stays.
//  - b < t <= cap: a spin at most the cap would have caught it; b grows to
//    2t (more than double: haltpoll's x2, aimed at the wait just seen), at
//    least grow_min_ns and at most the cap.
//  - t > cap: no allowed spin would have caught it; b halves, and falls to
//    0 below shrink_floor_ns (a spin that short is worth nothing).
// Since t after a sleep includes the kernel's wake-up latency (10 to 50 us
// in a KVM guest: more than a 15 us cap), a sleep can look long when the
// change came early. So every probe_every-th wait while b < cap is a probe:
// it spins the whole cap, and its t is exact when it ends in the spin. A
// wait that timed out before the cap says nothing and changes nothing.
// (RocksDB's write thread samples its adaptive spin now and then for the
// same reason.) Cost of probing where every wait is long: cap/probe_every
// per wait, 15 us / 32 = 0.5 us, 2.3% of a CPU on a 20 us trickle.
//
// Both functions are pure: tests feed them scripted wait sequences.
#pragma once
#include <stdint.h>

namespace uarch::idle {

// What is kept per address (8 bytes with the table's tag: src/idle/idle.cpp).
struct SpinState {
	uint32_t budget_ns;     // b
	uint8_t since_probe;    // waits since the last probe, while b < cap
	bool known;             // false: never seen, b is the cap
};

// How one wait spins.
struct SpinPlan {
	uint32_t spin_ns;
	bool probe;             // spins the cap although b is smaller
};

// How a wait ended.
struct WaitOutcome {
	uint64_t waited_ns;     // t: from the start of the wait to its return
	bool timed_out;         // ETIMEDOUT (t is then only a lower bound)
};

constexpr uint32_t grow_min_ns = 500;        // below this a doubling is too slow to matter
constexpr uint32_t shrink_floor_ns = 250;    // about 10 PAUSEs on Zen 5 (~24 ns each)
constexpr uint8_t probe_every = 32;

constexpr SpinPlan spin_plan(SpinState s, uint32_t cap_ns)
{
	uint32_t b = !s.known || s.budget_ns > cap_ns ? cap_ns : s.budget_ns;
	if (b < cap_ns && s.since_probe + 1 >= probe_every)
		return SpinPlan{cap_ns, true};
	return SpinPlan{b, false};
}

constexpr SpinState spin_learn(SpinState s, SpinPlan plan, WaitOutcome o, uint32_t cap_ns)
{
	uint32_t b = !s.known || s.budget_ns > cap_ns ? cap_ns : s.budget_ns;
	SpinState n{b, uint8_t(plan.probe || b >= cap_ns ? 0 : s.since_probe + 1), true};
	uint64_t t = o.waited_ns;
	if (o.timed_out && t <= cap_ns)
		return n;   // cut short by the caller: says nothing
	if (t <= b)
		return n;
	if (t <= cap_ns) {
		uint64_t g = 2 * t > grow_min_ns ? 2 * t : grow_min_ns;
		n.budget_ns = g < cap_ns ? uint32_t(g) : cap_ns;
	} else {
		n.budget_ns = b / 2 < shrink_floor_ns ? 0 : b / 2;
	}
	if (n.budget_ns >= cap_ns)
		n.since_probe = 0;
	return n;
}

} // namespace uarch::idle
