// The bound state of this process: the probed CPU, the tunables read from
// the environment, and the plan. Built once, before the first binding, by
// code that is safe inside an ifunc resolver.
#pragma once
#include "probe/cpu.h"
#include "select/plan.h"
#include "tunables/profile.h"
#include "tunables/tunables.h"

namespace uarch {

struct State {
	Cpu cpu;
	Tunables tunables;
	Plan plan;
	bool secure;             // AT_SECURE (or unknowable): tunables ignored
	bool env_readable;       // /proc/self/environ could be read
	uint64_t page_size;      // AT_PAGESZ (4096 where unknown)
	ProfileInfo profile;     // the system profile: read or why not
	char idle_name[48];      // "spin+umwait+futex"
};

// hwcap/hwcap2: what the loader handed the resolver (arm64); 0 elsewhere.
// Builds the state on the first call; a caller that finds another thread
// (or the code a signal handler interrupted) building it waits.
const State &state(uint64_t hwcap = 0, uint64_t hwcap2 = 0) __attribute__((visibility("hidden")));
// The same, but never waits: nullptr while another context builds it (the
// caller then takes a variant that needs no state). For the bindings made
// at the first call, which a signal handler may make, and the preload
// library's at load: both after the C library is relocated (never from
// libuarch.so's resolvers).
const State *state_try(uint64_t hwcap = 0, uint64_t hwcap2 = 0) __attribute__((visibility("hidden")));

// The function for a variant of an op on this architecture, or nullptr.
void *impl_fn(Op op, Impl impl) __attribute__((visibility("hidden")));

// How libuarch.so and libuarch.a bind their entries: "ifunc" or "pointer".
const char *library_binding() __attribute__((visibility("hidden")));

} // namespace uarch
