// uarch-bench mem|sync|idle [--quick] [--min] [--rows] [--csv FILE] [--json FILE] [--plot FILE.png]
//                           [google benchmark flags]
// Each subcommand measures uarch's functions side by side with what a
// program would use without it, in one process, and prints ratios.
#include <stdio.h>
#include <string.h>
#include <string>
#include "bench.h"
#include "common/stdout_check.h"

static int usage()
{
	printf(
		"usage: uarch-bench mem|sync|idle [--quick] [--min] [--rows] [--csv FILE] [--json FILE]\n"
		"                   [--plot FILE.png] [google benchmark flags]\n"
		"  --csv FILE   the result tables as CSV (the first in FILE, others in FILE's stem.NAME.csv)\n"
		"  --json FILE  the result tables as one JSON document\n"
		"  --rows       Google Benchmark's own rows on the console too (--benchmark_out=FILE\n"
		"               --benchmark_out_format=json|csv writes them to a file)\n"
		"  mem    uarch_memcpy/memmove/memset against the C library's, in paired rounds\n"
		"         (--benchmark_repetitions=N: N rounds a case;\n"
		"          --preload LIB: libuarch.so's against LIB's memcpy/memmove/memset;\n"
		"          --profile FILE...: replay uarch-prof profiles, glibc against uarch and each variant;\n"
		"          --trace FILE: replay a uarch-prof --trace in its order, glibc against uarch,\n"
		"          with the predicted end-to-end ratio; --trace-base FILE: less the calls and CPU time\n"
		"          of a trace of the same run without the measured work; --trace-only OP[:LO-HI]:\n"
		"          those calls alone; --trace-dump: print the replayed calls)\n"
		"  sync   barriers and prefetch against their usual forms\n"
		"  idle   wait/wake latency against a plain futex\n");
	return 0;
}

std::string cpu_name()
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	std::string out = "unknown CPU";
	if (!f)
		return out;
	char line[512];
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "model name", 10)) {
			const char *c = strchr(line, ':');
			out = c ? c + 2 : line;
			out.erase(out.find_last_not_of(" \n") + 1);
			break;
		}
	fclose(f);
	return out;
}

int main(int argc, char **argv)
{
	uarch::tools::check_stdout_at_exit("uarch-bench");
	if (argc < 2) {
		fprintf(stderr, "uarch-bench: which benchmark? mem, sync or idle (--help for usage)\n");
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
		return usage();
	int (*sub)(int, char **) = nullptr;
	if (!strcmp(argv[1], "mem"))
		sub = bench_mem;
	else if (!strcmp(argv[1], "sync"))
		sub = bench_sync;
	else if (!strcmp(argv[1], "idle"))
		sub = bench_idle;
	else {
		fprintf(stderr, "uarch-bench: unknown benchmark '%s': mem, sync or idle (--help for usage)\n", argv[1]);
		return 2;
	}
	// The subcommand sees "uarch-bench <sub>" as its argv[0].
	static std::string name;
	name = std::string(argv[0]) + " " + argv[1];
	argv[1] = name.data();
	return sub(argc - 1, argv + 1);
}
