// uarch-bench mem --profile FILE...: replays recorded profiles (uarch-prof).
#pragma once
#include <string>
#include <vector>
#include "report.h"

// files: the profiles; args: Google Benchmark's argv (args[0] the program);
// o: the common output flags; rounds: the paired rounds a replay (0: as
// many as fit half a second). Returns an exit status; a bad profile is one
// line and 2.
int bench_mem_profiles(const std::vector<std::string> &files, std::vector<char *> args, const report::Options &o,
		       int rounds);

// One op of one profile as a batch of calls for the default table: sizes
// and destination/source offsets (a cache line of a 4 KiB window plus the
// recorded alignment), drawn with the same seed as the replay above.
// False (with why) when the file is bad; true with no calls when the
// profile never called op. op: 0 memcpy, 1 memmove, 2 memset.
bool profile_batch(const std::string &path, uint32_t op, std::vector<uint32_t> *size, std::vector<uint32_t> *doff,
		   std::vector<uint32_t> *soff, std::string *why);

// The committed profiles (tests/data/profiles in the source tree, or where
// they were installed): their paths, sorted; empty when neither exists.
std::vector<std::string> committed_profiles();
