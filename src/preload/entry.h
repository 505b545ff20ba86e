// The preload library's memcpy, memmove and memset entries and how they
// are bound: entry.cpp binds the dynamic symbols at load (any ELF target),
// entry_<arch>.cpp holds the entries' page.
#pragma once
#include <stdint.h>

#define UARCH_HIDDEN __attribute__((visibility("hidden")))

extern "C" {
// Read by the entries: slot i holds the distance from itself to entry i's
// variant, first the portable ones' (entry_<arch>.cpp), in RELRO.
UARCH_HIDDEN extern int64_t uarch_preload_off[3];
// 1 once ld.so has relocated this library (entry.cpp).
UARCH_HIDDEN extern int uarch_preload_relocated;
// The first byte of the page that holds the entries: entry i (memcpy,
// memmove, memset) at page + entry_stride * i (entry_<arch>.cpp).
UARCH_HIDDEN extern const unsigned char uarch_preload_entry_page[];
}

namespace uarch {

constexpr unsigned entry_count = 3;   // memcpy, memmove, memset
constexpr uint32_t entry_stride = 32;

enum class EntryBinding : int {
	unbound = 0,    // not yet: the load-time binding did not build the state
	pointer = 3,    // each entry jumps through a pointer to its variant
};

struct State;
// Sets the pointers to the variants and returns the state; nullptr
// (nothing done) where no state could be had. Idempotent, safe from any
// thread. hwcap, hwcap2: what an arm64 resolver was handed.
UARCH_HIDDEN const State *bind_entries(uint64_t hwcap = 0, uint64_t hwcap2 = 0);
UARCH_HIDDEN EntryBinding entry_binding();
// True once ld.so has relocated this library (its last relocation ran the
// load-time binding): before that nothing reached through the GOT (TLS
// offsets, the C library) may be used.
inline bool relocated() { return __atomic_load_n(&uarch_preload_relocated, __ATOMIC_ACQUIRE); }
// True once memcpy/memmove/memset's dynamic symbols name the variants (at load).
UARCH_HIDDEN bool symbols_bound();

} // namespace uarch

#undef UARCH_HIDDEN
