// Where the objects that the load-time binding writes live.
#pragma once

// Zero-initialised objects that every process writes at load go to .data,
// not .bss: onto the page that the loader dirties anyway when it relocates
// this object's pointers, instead of each onto a .bss page of its own that
// the first store faults in. In the Zen 4 KVM guest (family 0x19 model
// 0x11) three such faults were 6-8 us of every start under the preload
// library (scripts/bench-startup.sh, the interleaved exec figure).
#define UARCH_LOAD_DATA __attribute__((section(".data.uarch_load")))
