// The preload library's memcpy, memmove and memset entries and how they
// are bound (x86-64: see entry_x86_64.cpp).
#pragma once

namespace uarch {

constexpr unsigned entry_count = 3;   // memcpy, memmove, memset

enum class EntryBinding : int {
	unbound = 0,    // not yet: the load-time binding did not build the state
	patched = 2,    // each entry is a `jmp rel32` to its variant
	pointer = 3,    // each entry jumps through a pointer (patching refused)
	deferred = 4,   // through a pointer until the first copy of 256 KiB patches
};

// Sets the pointers to the variants; false (nothing done) while the state
// is being built elsewhere. Idempotent, safe from any thread.
bool bind_entries() __attribute__((visibility("hidden")));
// Tries once to patch the page (bind_entries first). Safe from any thread.
void patch_entries() __attribute__((visibility("hidden")));
EntryBinding entry_binding() __attribute__((visibility("hidden")));
// True once memcpy/memmove/memset's dynamic symbols name the variants
// (at load; see entry_x86_64.cpp).
bool symbols_bound() __attribute__((visibility("hidden")));

} // namespace uarch
