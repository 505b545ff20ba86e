// A byte count as the tools print it: "512 KiB", "16 MiB", "2112", and
// "inf" for the tunables' "inf" and the policy's ~0 (no end).
#pragma once
#include <cinttypes>
#include <cstdio>
#include <string>
#include "tunables/tunables.h"

namespace uarch::tools {

inline std::string size_text(uint64_t v)
{
	char b[32];
	if (v >= Tunables::max_number) return "inf";
	if (v && v % (1u << 20) == 0) std::snprintf(b, sizeof b, "%" PRIu64 " MiB", v >> 20);
	else if (v && v % 1024 == 0) std::snprintf(b, sizeof b, "%" PRIu64 " KiB", v >> 10);
	else std::snprintf(b, sizeof b, "%" PRIu64, v);
	return b;
}

} // namespace uarch::tools
