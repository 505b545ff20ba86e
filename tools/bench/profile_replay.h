// uarch-bench mem --profile FILE...: replays recorded profiles (uarch-prof).
#pragma once
#include <string>
#include <vector>
#include "report.h"

// files: the profiles; args: Google Benchmark's argv (args[0] the program);
// o: the common output flags. Returns an exit status; a bad profile is one
// line and 2.
int bench_mem_profiles(const std::vector<std::string> &files, std::vector<char *> args, const report::Options &o);
