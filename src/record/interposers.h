// The recorder's names (interposers.cpp) look up the C library's functions
// they pass on to, once, at load.
#pragma once

namespace uarch::record {

__attribute__((visibility("hidden"))) void find_next_functions();

} // namespace uarch::record
