// uarch-bench subcommands. Each takes argv as a program's main would
// (argv[0] = "uarch-bench <sub>") and returns an exit status.
#pragma once
#include <string>

int bench_mem(int argc, char **argv);
int bench_sync(int argc, char **argv);
int bench_idle(int argc, char **argv);

// The CPU's model name from /proc/cpuinfo, for report headers.
std::string cpu_name();
