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

// The state is built at load (a constructor, ifunc resolvers, the preload
// library's load-time resolver) and published once; from then on every
// call below is a load. Nothing here waits for another thread: a context
// that finds no state published builds one itself (system calls: the
// environment, the profile, the affinity), and publishes it unless another
// context did first. hwcap/hwcap2: what an arm64 resolver was handed.
// after_startup: the C library is relocated (not libuarch.so's resolvers).
#define UARCH_HIDDEN __attribute__((visibility("hidden")))
// The published state, or nullptr: a load, never a system call.
const State *state_published() UARCH_HIDDEN;
// The published state, building and publishing it first where there is
// none; nullptr only while every build slot is claimed by a live context.
const State *state_build(uint64_t hwcap = 0, uint64_t hwcap2 = 0, bool after_startup = true) UARCH_HIDDEN;
// The plan of the published state, or of one built here (on this stack
// where every slot is claimed): what a resolver may return for good.
Plan plan_now(uint64_t hwcap = 0, uint64_t hwcap2 = 0, bool after_startup = true) UARCH_HIDDEN;
// x86-64: the published plan was made without the cache sizes (a leaf per
// cache level, each a VM exit in a guest); at load, in a constructor after
// every relocation, this takes them from the C library's record (else
// CPUID) and finishes the thresholds. Never called inside a copy.
void complete_plan_at_load() UARCH_HIDDEN;
// For tools and tests, which never race a build: the built state.
const State &state() UARCH_HIDDEN;
// Tests only: as if nothing were published and the first claimed slots
// were being built by other contexts of this process.
void state_forget_for_test(unsigned claimed_elsewhere) UARCH_HIDDEN;
// "spin+umwait+futex" for an idle policy, into out (48 bytes).
void compose_idle_name(const IdlePolicy &p, char *out) UARCH_HIDDEN;
#undef UARCH_HIDDEN

// The function for a variant of an op on this architecture, or nullptr.
void *impl_fn(Op op, Impl impl) __attribute__((visibility("hidden")));

// How libuarch.so and libuarch.a bind their entries: "ifunc" or "pointer".
const char *library_binding() __attribute__((visibility("hidden")));

} // namespace uarch
