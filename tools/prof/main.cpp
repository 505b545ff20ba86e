// uarch-prof: record which memcpy/memmove/memset calls a program makes, and
// report them.
//   uarch-prof [-o FILE] [--trace N [--trace-keep first|last]] [--writers USER] -- PROGRAM ARGS...
//       run PROGRAM (and its children) under libuarch_record.so; each
//       process leaves a file at exit; they are merged into FILE (default
//       uarch.uprof). --trace N: each process also records its calls in
//       order, N at most (the first N, the default, or the last N), merged
//       into FILE's stem + .utrace. --writers USER: processes that become
//       USER (a server's workers) write theirs too. Exit status: PROGRAM's.
//   uarch-prof report [--json] [--plot FILE.png] FILE...
//   uarch-prof report [--dump] TRACE...
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <string>
#include <vector>
#include "common/gnuplot.h"
#include "common/stdout_check.h"
#include "profile.h"
#include "trace.h"

using namespace uarch::prof;

namespace {

int fail(const std::string &msg)
{
	fprintf(stderr, "uarch-prof: %s\n", msg.c_str());
	return 2;
}

int usage()
{
	printf("usage: uarch-prof [-o FILE] [--trace N [--trace-keep first|last]] [--writers USER] -- PROGRAM ARGS...\n"
	       "       uarch-prof report [--json] [--plot FILE.png] FILE...\n"
	       "       uarch-prof report [--dump] FILE.utrace...\n"
	       "Records the memcpy/memmove/memset calls of PROGRAM and its children\n"
	       "(sizes, alignments, memmove overlap, threads), and the calls and bytes of\n"
	       "memcmp, bcmp, strlen and strcmp, into FILE (default uarch.uprof).\n"
	       "--trace N: also the calls in their order (op, dst, src, size, thread, time since\n"
	       "the thread's previous call), at most N a process: the first N (--trace-keep first,\n"
	       "the default) or the last N; into FILE's stem + .utrace (uarch-bench mem --trace\n"
	       "replays it).\n"
	       "--writers USER: the directory the processes write into is USER's (as root), so\n"
	       "that processes which drop to USER, as a server's workers do, are recorded too.\n");
	return 0;
}

bool exists(const std::string &p) { return access(p.c_str(), R_OK) == 0; }

std::string record_library()
{
	if (const char *e = getenv("UARCH_RECORD_LIB"))
		return e;
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n > 0) {
		self[n] = 0;
		std::string dir(self);
		dir.erase(dir.rfind('/'));
		// The build tree: tools/prof/uarch-prof beside libuarch_record.so two up.
		for (const char *name : {"/../../libuarch_record.so", "/../../libuarch_record.so.0"})
			if (exists(dir + name))
				return dir + name;
	}
	return UARCH_RECORD_INSTALLED;
}

// FILE's stem + .utrace (FILE.utrace where FILE has no .uprof).
std::string trace_path(const std::string &out)
{
	size_t n = out.size();
	bool uprof = n > 6 && out.compare(n - 6, 6, ".uprof") == 0;
	return (uprof ? out.substr(0, n - 6) : out) + ".utrace";
}

// A process's trace: where it was written, and the descriptor it is read
// through (see regular_file).
struct Part {
	std::string path;
	int fd;
};

std::string fd_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

// The processes' traces, by start time, into one file; what it holds and
// what recording cost, on stderr.
void merge_traces(const std::vector<Part> &parts, const std::string &out)
{
	std::vector<TraceSection> all;
	for (const Part &p : parts) {
		std::vector<TraceSection> s;
		std::string why;
		if (!load_trace(fd_path(p.fd), &s, &why))
			fprintf(stderr, "uarch-prof: %s: %s (left out)\n", p.path.c_str(), why.c_str());
		else
			all.insert(all.end(), s.begin(), s.end());
	}
	if (all.empty()) {
		fprintf(stderr, "uarch-prof: no process wrote a trace; %s not written\n", out.c_str());
		return;
	}
	std::stable_sort(all.begin(), all.end(),
			 [](const TraceSection &a, const TraceSection &b) { return a.header.start_ns < b.header.start_ns; });
	std::string why;
	if (!save_trace(out, all, &why)) {
		fprintf(stderr, "uarch-prof: %s: %s\n", out.c_str(), why.c_str());
		return;
	}
	uint64_t calls = 0, kept = 0;
	double cost = 0;
	for (const TraceSection &s : all) {
		calls += s.header.calls;
		kept += s.rec.size();
		cost += overhead_ns(s.header) * double(s.header.calls);
	}
	fprintf(stderr,
		"uarch-prof: trace: %llu of %llu calls recorded (%llu dropped), %zu process(es), into %s\n"
		"uarch-prof: trace: recording cost about %.1f ns a call (timed at each process's exit)\n",
		(unsigned long long)kept, (unsigned long long)calls, (unsigned long long)(calls - kept), all.size(),
		out.c_str(), calls ? cost / double(calls) : 0.0);
}

struct Recording {
	std::string out = "uarch.uprof", trace_n, keep = "first", writers;
	int program = 0;   // argv index of PROGRAM
	std::string parts; // the directory each process writes its part into
};

// The options before PROGRAM; an error message, or "" when they are right.
std::string parse_record(int argc, char **argv, Recording *r)
{
	int i = 1;
	for (; i < argc; i++) {
		std::string a = argv[i];
		if (a == "--") {
			i++;
			break;
		}
		if (a == "--trace" && i + 1 < argc)
			r->trace_n = argv[++i];
		else if (a.rfind("--trace=", 0) == 0)
			r->trace_n = a.substr(8);
		else if (a == "--trace-keep" && i + 1 < argc)
			r->keep = argv[++i];
		else if (a.rfind("--trace-keep=", 0) == 0)
			r->keep = a.substr(13);
		else if (a == "--writers" && i + 1 < argc)
			r->writers = argv[++i];
		else if (a.rfind("--writers=", 0) == 0)
			r->writers = a.substr(10);
		else if (a == "-o" && i + 1 < argc)
			r->out = argv[++i];
		else if (a.rfind("-o", 0) == 0 && a.size() > 2)
			r->out = a.substr(2);
		else if (a[0] != '-')
			break;
		else
			return "unknown option '" + a + "' (--help for usage)";
	}
	r->program = i;
	if (i >= argc)
		return "no program to run (uarch-prof [-o FILE] -- PROGRAM ARGS...)";
	if (!r->trace_n.empty()) {
		char *end = nullptr;
		errno = 0;
		unsigned long long n = strtoull(r->trace_n.c_str(), &end, 10);
		if (errno || end == r->trace_n.c_str() || *end || r->trace_n[0] == '-' || n < 1 || n > (1ull << 32))
			return "--trace wants a count of calls a process, 1 to 4294967296, got '" + r->trace_n + "'";
	}
	if (r->keep != "first" && r->keep != "last")
		return "--trace-keep wants first or last, got '" + r->keep + "'";
	return "";
}

// Before PROGRAM runs: the output files writable, the parts directory made
// (given to --writers: processes that drop to that user write there too;
// no one else can), the recorder's environment set. An error, or "".
std::string prepare_record(Recording *r)
{
	std::string lib = record_library();
	if (!exists(lib))
		return lib + ": recording library not found (set UARCH_RECORD_LIB)";
	const passwd *pw = r->writers.empty() ? nullptr : getpwnam(r->writers.c_str());
	if (!r->writers.empty() && !pw)
		return "--writers " + r->writers + ": no such user";
	if (pw && geteuid() != 0 && pw->pw_uid != geteuid())
		return "--writers " + r->writers + ": only root can give the directory to another user";
	std::vector<std::string> files = {r->out};
	if (!r->trace_n.empty())
		files.push_back(trace_path(r->out));
	for (const std::string &f : files) {
		int fd = open(f.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0)
			return f + ": " + strerror(errno);
		close(fd);
	}
	r->parts = r->out + ".parts.XXXXXX";
	if (!mkdtemp(r->parts.data()))
		return r->parts + ": " + strerror(errno);
	if (pw && chown(r->parts.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
		std::string why = "--writers " + r->writers + ": " + r->parts + ": " + strerror(errno);
		rmdir(r->parts.c_str());
		return why;
	}
	// Absolute, so that a program that changes directory writes here too.
	char *abs = realpath(r->parts.c_str(), nullptr);
	std::string prefix = std::string(abs ? abs : r->parts.c_str()) + "/";
	free(abs);
	setenv("UARCH_PROF_OUT", prefix.c_str(), 1);
	if (!r->trace_n.empty()) {
		setenv("UARCH_PROF_TRACE", r->trace_n.c_str(), 1);
		setenv("UARCH_PROF_TRACE_KEEP", r->keep.c_str(), 1);
	} else {
		unsetenv("UARCH_PROF_TRACE");
	}
	const char *pre = getenv("LD_PRELOAD");
	std::string preload = lib + (pre && *pre ? std::string(":") + pre : "");
	setenv("LD_PRELOAD", preload.c_str(), 1);
	return "";
}

// PROGRAM run to its end; its exit status (128 + signal when killed), or
// -1 when it could not be started (errno).
int run_program(char **argv)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "uarch-prof: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

// The regular file path names now, opened without following a link, or
// -1 with why: with --writers, another user can plant links and FIFOs in
// the parts directory. Read through fd_path(), closed by the caller.
int regular_file(const std::string &path, std::string *why)
{
	int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		return fd;
	*why = fd >= 0 ? "not a regular file" : errno == ELOOP ? "a symbolic link, not followed" : strerror(errno);
	if (fd >= 0)
		close(fd);
	return -1;
}

// The processes' parts merged into the output files and removed; code
// (PROGRAM's status) unless the profile could not be written.
int collect_parts(const Recording &r, int code)
{
	Profile all{};
	DIR *d = opendir(r.parts.c_str());
	int files = 0;
	std::vector<Part> traces;
	while (dirent *e = d ? readdir(d) : nullptr) {
		std::string name = e->d_name, path = r.parts + "/" + name;
		bool trace = name.size() > 7 && name.compare(name.size() - 7, 7, ".utrace") == 0;
		if (!trace && (name.size() < 6 || name.compare(name.size() - 6, 6, ".uprof") != 0))
			continue;
		std::string why;
		int fd = regular_file(path, &why);
		Profile p;
		if (fd >= 0 && trace) {
			traces.push_back({path, fd});
		} else if (fd >= 0) {
			if (load(fd_path(fd), &p, &why) && !merge(&all, p))
				why = "its counts and the others' overflow 64 bits together";
			close(fd);
		}
		if (!why.empty())
			fprintf(stderr, "uarch-prof: %s: %s (left out)\n", path.c_str(), why.c_str());
		else if (!trace)
			files++;
		unlink(path.c_str());
	}
	if (d)
		closedir(d);
	std::sort(traces.begin(), traces.end(), [](const Part &a, const Part &b) { return a.path < b.path; });
	if (!r.trace_n.empty())
		merge_traces(traces, trace_path(r.out));
	for (const Part &t : traces)
		close(t.fd);
	rmdir(r.parts.c_str());
	if (!files) {   // FILE, if it exists, is left as it was
		fprintf(stderr, "uarch-prof: no process wrote a profile (statically linked, or killed by a signal?); %s not written\n",
			r.out.c_str());
		return code;
	}
	std::string why;
	if (!save(r.out, all, &why)) {
		fprintf(stderr, "uarch-prof: %s: %s\n", r.out.c_str(), why.c_str());
		return code ? code : 1;
	}
	return code;
}

int record(int argc, char **argv)
{
	Recording r;
	std::string err = parse_record(argc, argv, &r);
	if (err.empty())
		err = prepare_record(&r);
	if (!err.empty())
		return fail(err);
	int code = run_program(argv + r.program);
	if (code < 0) {
		err = std::string("fork: ") + strerror(errno);
		rmdir(r.parts.c_str());
		return fail(err);
	}
	return collect_parts(r, code);
}

struct OpSummary {
	uint64_t calls = 0, bytes = 0;
};

OpSummary summarize(const OpCounts &o)
{
	OpSummary s;
	for (uint32_t i = 0; i < size_slots; i++)
		s.calls += o.size[i];
	for (uint32_t i = 0; i <= exact_max; i++)
		s.bytes += o.size[i] * i;
	s.bytes += o.big_bytes;
	return s;
}

double pct(uint64_t a, uint64_t b) { return b ? 100.0 * double(a) / double(b) : 0.0; }

// Share of calls whose address is a multiple of k (mod 64).
double aligned_share(const uint64_t *align, uint64_t calls, uint32_t k)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < 64; i += k)
		n += align[i];
	return pct(n, calls);
}

const uint64_t cut_points[] = {0, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 16384, 65536, 1 << 20};

void report_text(const Profile &p, size_t nfiles)
{
	const Counts &c = p.counts;
	printf("profile: %zu file(s), %llu process(es), %llu thread(s)\n", nfiles,
	       (unsigned long long)p.header.processes, (unsigned long long)p.header.threads);
	printf("%-8s %14s %16s %12s\n", "op", "calls", "bytes", "mean bytes");
	for (uint32_t op = 0; op < p_op_count; op++) {
		OpSummary s = summarize(c.op[op]);
		printf("%-8s %14llu %16llu %12.1f\n", op_name(op), (unsigned long long)s.calls,
		       (unsigned long long)s.bytes, s.calls ? double(s.bytes) / double(s.calls) : 0.0);
	}
	uint64_t cmp_calls = 0, cmp_bytes = 0;
	for (uint32_t k = 0; k < cmp_count; k++)
		cmp_calls += c.cmp.calls[k], cmp_bytes += c.cmp.bytes[k];
	printf("\ncomparisons and string lengths (C library's functions, counted):\n%-8s %14s %16s %12s %8s %8s\n",
	       "name", "calls", "bytes", "mean bytes", "calls%", "bytes%");
	for (uint32_t k = 0; k < cmp_count; k++)
		printf("%-8s %14llu %16llu %12.1f %7.1f%% %7.1f%%\n", cmp_name(k), (unsigned long long)c.cmp.calls[k],
		       (unsigned long long)c.cmp.bytes[k], c.cmp.calls[k] ? double(c.cmp.bytes[k]) / double(c.cmp.calls[k]) : 0.0,
		       pct(c.cmp.calls[k], cmp_calls), pct(c.cmp.bytes[k], cmp_bytes));
	for (uint32_t op = 0; op < p_op_count; op++) {
		const OpCounts &o = c.op[op];
		OpSummary s = summarize(o);
		if (!s.calls)
			continue;
		printf("\n%s: %llu calls by name:", op_name(op), (unsigned long long)s.calls);
		for (uint32_t e = 0; e < entry_count; e++)
			if (entry_op(e) == op && c.entry[e])
				printf(" %s %llu", entry_name(e), (unsigned long long)c.entry[e]);
		printf("\n  cumulative share of calls by size:");
		for (uint64_t cut : cut_points) {
			uint64_t n = 0;
			for (uint32_t i = 0; i < size_slots; i++)
				if (slot_hi(i) <= cut)
					n += o.size[i];
			printf(" <=%llu %.1f%%", (unsigned long long)cut, pct(n, s.calls));
		}
		std::vector<std::pair<uint64_t, uint32_t>> top;
		for (uint32_t i = 0; i < size_slots; i++)
			if (o.size[i])
				top.push_back({o.size[i], i});
		std::sort(top.begin(), top.end(), [](auto &a, auto &b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
		printf("\n  top sizes:");
		for (size_t k = 0; k < top.size() && k < 10; k++) {
			uint32_t i = top[k].second;
			if (i <= exact_max)
				printf(" %u (%.1f%%)", i, pct(top[k].first, s.calls));
			else
				printf(" %llu-%llu (%.1f%%)", (unsigned long long)slot_lo(i), (unsigned long long)slot_hi(i),
				       pct(top[k].first, s.calls));
		}
		printf("\n  dst aligned to 64/16/8: %.1f%% %.1f%% %.1f%%", aligned_share(o.dst_align, s.calls, 64),
		       aligned_share(o.dst_align, s.calls, 16), aligned_share(o.dst_align, s.calls, 8));
		if (op != p_memset)
			printf("; src aligned to 64/16/8: %.1f%% %.1f%% %.1f%%", aligned_share(o.src_align, s.calls, 64),
			       aligned_share(o.src_align, s.calls, 16), aligned_share(o.src_align, s.calls, 8));
		if (op == p_memmove)
			printf("\n  overlap: disjoint %.1f%%, forward %.1f%%, backward %.1f%%, same %.1f%%",
			       pct(o.overlap[ov_disjoint], s.calls), pct(o.overlap[ov_forward], s.calls),
			       pct(o.overlap[ov_backward], s.calls), pct(o.overlap[ov_same], s.calls));
		printf("\n");
	}
}

void json_array(const uint64_t *v, uint32_t n)
{
	printf("[");
	for (uint32_t i = 0; i < n; i++)
		printf("%s%llu", i ? ", " : "", (unsigned long long)v[i]);
	printf("]");
}

void report_json(const Profile &p, size_t nfiles)
{
	const Counts &c = p.counts;
	printf("{\n  \"version\": %u, \"files\": %zu, \"processes\": %llu, \"threads\": %llu,\n  \"entries\": {", version,
	       nfiles, (unsigned long long)p.header.processes, (unsigned long long)p.header.threads);
	for (uint32_t e = 0; e < entry_count; e++)
		printf("%s\"%s\": %llu", e ? ", " : "", entry_name(e), (unsigned long long)c.entry[e]);
	printf("},\n  \"compare\": {");
	for (uint32_t k = 0; k < cmp_count; k++)
		printf("%s\"%s\": {\"calls\": %llu, \"bytes\": %llu}", k ? ", " : "", cmp_name(k),
		       (unsigned long long)c.cmp.calls[k], (unsigned long long)c.cmp.bytes[k]);
	printf("},\n  \"ops\": {\n");
	for (uint32_t op = 0; op < p_op_count; op++) {
		const OpCounts &o = c.op[op];
		OpSummary s = summarize(o);
		printf("    \"%s\": {\"calls\": %llu, \"bytes\": %llu,\n      \"sizes\": [", op_name(op),
		       (unsigned long long)s.calls, (unsigned long long)s.bytes);
		bool first = true;
		for (uint32_t i = 0; i < size_slots; i++)
			if (o.size[i]) {
				printf("%s[%llu, %llu, %llu]", first ? "" : ", ", (unsigned long long)slot_lo(i),
				       (unsigned long long)slot_hi(i), (unsigned long long)o.size[i]);
				first = false;
			}
		printf("],\n      \"dst_align\": ");
		json_array(o.dst_align, 64);
		printf(",\n      \"src_align\": ");
		json_array(o.src_align, 64);
		printf(",\n      \"overlap\": {\"disjoint\": %llu, \"forward\": %llu, \"backward\": %llu, \"same\": %llu}}%s\n",
		       (unsigned long long)o.overlap[ov_disjoint], (unsigned long long)o.overlap[ov_forward],
		       (unsigned long long)o.overlap[ov_backward], (unsigned long long)o.overlap[ov_same],
		       op + 1 < p_op_count ? "," : "");
	}
	printf("  }\n}\n");
}

bool plot(const Profile &p, const std::string &png, const std::string &title, std::string *why)
{
	using uarch::tools::gp_quote;
	return uarch::tools::draw_plot(png, [&](const std::string &dir, const std::string &out) {
		std::string cmds;
		for (uint32_t op = 0; op < p_op_count; op++) {
			const OpCounts &o = p.counts.op[op];
			OpSummary s = summarize(o);
			if (!s.calls)
				continue;
			std::string dat = dir + "/" + op_name(op) + ".dat";
			FILE *f = fopen(dat.c_str(), "w");
			if (!f)
				continue;
			uint64_t n = 0;
			for (uint32_t i = 0; i < size_slots; i++)
				if (o.size[i]) {
					n += o.size[i];
					fprintf(f, "%llu %.6f\n", (unsigned long long)std::max<uint64_t>(slot_hi(i), 1),
						pct(n, s.calls));
				}
			fclose(f);
			cmds += (cmds.empty() ? "plot " : ", ") + gp_quote(dat) + " using 1:2 with steps lw 2 title " +
				gp_quote(std::string(op_name(op)) + " (" + std::to_string(s.calls) + " calls)");
		}
		return "set terminal pngcairo size 900,600\nset output " + gp_quote(out) + "\nset title " +
		       gp_quote(title) +
		       "\nset logscale x 2\nset xlabel 'size (bytes)'\nset ylabel 'calls <= size (%)'\n"
		       "set xtics ('1' 1, '8' 8, '64' 64, '512' 512, '4K' 4096, '32K' 32768, '256K' 262144, '2M' 2097152)\n"
		       "set yrange [0:100]\nset grid\nset key bottom right\n" +
		       (cmds.empty() ? std::string("plot 0 notitle") : cmds) + "\n";
	}, why);
}

int report(int argc, char **argv)
{
	bool json = false, dump = false;
	std::string png;
	std::vector<std::string> files;
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		if (a == "--json")
			json = true;
		else if (a == "--dump")
			dump = true;
		else if (a == "--plot" && i + 1 < argc)
			png = argv[++i];
		else if (a.rfind("--plot=", 0) == 0)
			png = a.substr(7);
		else if (a.size() > 1 && a[0] == '-')
			return fail("report: unknown option '" + a + "'");
		else
			files.push_back(a);
	}
	if (files.empty())
		return fail("report: no profile given (uarch-prof report [--json] [--plot FILE.png] FILE...)");
	size_t ntrace = std::count_if(files.begin(), files.end(), is_trace);
	if (ntrace && ntrace != files.size())
		return fail("report: traces and profiles cannot be reported together");
	if (dump && !ntrace)
		return fail("report: --dump prints traces (FILE.utrace), not profiles");
	if (ntrace) {
		if (json || !png.empty())
			return fail("report: a trace has the text report and --dump (--json and --plot take profiles)");
		std::vector<TraceSection> all;
		for (const std::string &f : files) {
			std::vector<TraceSection> s;
			std::string why;
			if (!load_trace(f, &s, &why))
				return fail(f + ": " + why);
			all.insert(all.end(), s.begin(), s.end());
		}
		if (dump)
			dump_trace(all);
		else
			report_trace(all, files.size());
		return 0;
	}
	std::string plot_why;
	if (!png.empty() && !uarch::tools::can_plot(png, &plot_why))
		return fail(plot_why);
	Profile all{};
	for (const std::string &f : files) {
		Profile p;
		std::string why;
		if (!load(f, &p, &why))
			return fail(f + ": " + why);
		if (!merge(&all, p))
			return fail(f + ": its counts and the other files' overflow 64 bits together");
	}
	if (json)
		report_json(all, files.size());
	else
		report_text(all, files.size());
	if (!png.empty()) {
		std::string title = files.size() == 1 ? files[0] : std::to_string(files.size()) + " profiles";
		size_t cut = title.rfind('/');
		if (cut != std::string::npos)
			title = title.substr(cut + 1);
		if (!plot(all, png, "cumulative size distribution: " + title, &plot_why))
			return fail(png + ": " + plot_why);
	}
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	uarch::tools::check_stdout_at_exit("uarch-prof");
	if (argc < 2)
		return fail("what to run? uarch-prof [-o FILE] -- PROGRAM ARGS... (--help for usage)");
	std::string a = argv[1];
	if (a == "-h" || a == "--help")
		return usage();
	if (a == "report")
		return report(argc - 1, argv + 1);
	return record(argc, argv);
}
