// uarch-bench mem --trace FILE: replays a trace (uarch-prof --trace) in its
// recorded order.
#pragma once
#include <string>
#include <vector>
#include "report.h"

// rest: the arguments left after the common flags and --trace (argv[0]
// first); rounds: paired repetitions a side (0: as many as fit about two
// seconds, --quick a fifth, 5 at least); dump: print the replayed sequence
// and the arena's slot statistics, time nothing. Returns an exit status; a
// bad trace or argument is one line and 2.
int bench_mem_trace(const std::string &file, const std::vector<char *> &rest, const report::Options &o, int rounds,
		    bool dump);
