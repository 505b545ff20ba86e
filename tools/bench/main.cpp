// uarch-bench mem|sync|idle [google benchmark flags] [--csv FILE] [--json FILE] [--plot FILE.png]
// Each subcommand measures uarch's functions side by side with what a
// program would use without it, in one process, and prints ratios.
#include <stdio.h>
#include <string.h>
#include <string>
#include "bench.h"

static int usage(FILE *f)
{
	fprintf(f,
		"usage: uarch-bench mem|sync|idle [--quick] [--min] [google benchmark flags]\n"
		"                   [--csv FILE] [--json FILE] [--plot FILE.png]\n"
		"  mem    uarch_memcpy/memmove/memset against the C library's\n"
		"  sync   barriers and prefetch against their usual forms\n"
		"  idle   wait/wake latency against a plain futex\n");
	return f == stdout ? 0 : 2;
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
	if (argc < 2)
		return usage(stderr);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
		return usage(stdout);
	int (*sub)(int, char **) = nullptr;
	if (!strcmp(argv[1], "mem"))
		sub = bench_mem;
	else if (!strcmp(argv[1], "sync"))
		sub = bench_sync;
	else if (!strcmp(argv[1], "idle"))
		sub = bench_idle;
	else
		return usage(stderr);
	// The subcommand sees "uarch-bench <sub>" as its argv[0].
	static std::string name;
	name = std::string(argv[0]) + " " + argv[1];
	argv[1] = name.data();
	return sub(argc - 1, argv + 1);
}
