// uarch-tune: measures where this machine's crossovers lie (rep movsb and
// rep stosb against the vector loops, non-temporal against ordinary
// stores, the prefetch stride, a futex wake-up) by calling the variants
// by name with their thresholds set per candidate, prints the evidence,
// and writes the profile in UARCH_TUNABLES syntax. The decision itself is
// decide.cpp's pure function.
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>
#include "generic/prefetch_blocks.h"
#include "arch/x86_64/mem.h"
#include "common/cold_slots.h"
#include "common/gnuplot.h"
#include "common/size_text.h"
#include "common/stats.h"
#include "common/stdout_check.h"
#include "decide.h"
#include "profile_edit.h"
#include "dispatch/state.h"
#include "select/plan.h"

using namespace uarch;
using namespace uarch::tune;

namespace {

using uarch::tools::median;
using uarch::tools::thread_ns;
using CopyFn = void *(*)(void *, const void *, size_t);
using SetFn = void *(*)(void *, int, size_t);
using RangeFn = void (*)(const void *, size_t);

[[noreturn]] void die(const std::string &msg)
{
	std::fprintf(stderr, "uarch-tune: %s\n", msg.c_str());
	std::exit(2);
}

struct Config {
	bool quick = false;
	double noise_limit = 0.10;
	std::string plot, output;
	bool install = false;
	bool cold = false;   // --cold: the rep windows timed into destinations out of the cache
	bool section = false;   // --section NAME --entries STRING: one program's section, nothing measured
	std::string section_name, entries;
	int blocks = 3, samples = 7;
	size_t sample_bytes = 2u << 20;   // bytes moved per sample (small sizes: many calls)
};

double wall_ns()
{
	timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return double(t.tv_sec) * 1e9 + double(t.tv_nsec);
}

// samples[block][i] -> median of all, spread of the block medians.
Timing summarize(const std::vector<std::vector<double>> &blocks)
{
	std::vector<double> all, meds;
	for (auto &b : blocks) {
		all.insert(all.end(), b.begin(), b.end());
		meds.push_back(median(b));
	}
	Timing t;
	t.ns = median(all);
	auto [lo, hi] = std::minmax_element(meds.begin(), meds.end());
	t.spread = t.ns > 0 && meds.size() > 1 ? (*hi - *lo) / t.ns : 0;
	return t;
}

// Two regions, src - dst == 1088 (mod 4096) as in uarch-bench mem: no
// 4 KiB aliasing for either side, and far enough apart for rep movsb.
struct Buffers {
	char *dst = nullptr, *src = nullptr;
	size_t len = 0;
	explicit Buffers(size_t n)
	{
		len = (n + 8191) / 4096 * 4096;
		size_t total = 2 * len + 4 * 4096 + 1088;
		void *m = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			die("cannot map " + std::to_string(total >> 20) + " MiB for the buffers");
		dst = static_cast<char *>(m);
		src = dst + len + 8192 + 1088;
		std::memset(dst, 1, total);
	}
};

// The thresholds each candidate runs under: only its own path can fire.
// Written as plans (0: never) and converted as the binder converts them.
MemParams loop_params() { return arch_params_for(MemThresholds{}); }
MemParams rep_params()
{
	MemThresholds m{};
	m.movsb_min = m.stosb_min = 1;
	m.movsb_max = m.stosb_max = ~uint64_t(0);
	return arch_params_for(m);
}
MemParams nt_params()
{
	MemThresholds m{};
	m.nt_min = m.nt_fill_min = 1;   // every byte streams
	return arch_params_for(m);
}

struct Candidate {
	MemParams params;
};

CopyFn volatile g_copy;
SetFn volatile g_set;
// The fill byte: -1, the call's index (as uarch-bench mem); else this
// byte. One call a sample (the non-temporal sizes) would otherwise fill
// zeros only, which the Zen 4 guest streams 3x as fast as other bytes.
int g_fill_byte = -1;

// --cold: every call's destination the next slot of a pool out of the
// cache (common/cold_slots.h); the source stays the same, hot.
struct ColdSlots {
	char *pool = nullptr;
	size_t len = 0;
	std::vector<uint32_t> off;   // this size's slots, in visiting order
	size_t next = 0;
	void for_size(size_t n)
	{
		off = tools::cold_slots(n, len, n);
		next = 0;
	}
	char *take(char *d)
	{
		size_t o = off[next];
		next = next + 1 == off.size() ? 0 : next + 1;
		return pool + o + (uintptr_t(d) & 63);   // d's misalignment kept
	}
};
ColdSlots *g_cold = nullptr;

// One sample: ns per call of `calls` calls of op at size n.
double sample(bool set, char *d, const char *s, size_t n, size_t calls)
{
	double t0 = thread_ns();
	ColdSlots *cs = g_cold;
	if (set) {
		SetFn f = g_set;
		int b = g_fill_byte;
		for (size_t i = 0; i < calls; i++)
			f(cs ? cs->take(d) : d, b < 0 ? int(i) : b, n);
	} else {
		CopyFn f = g_copy;
		for (size_t i = 0; i < calls; i++)
			f(cs ? cs->take(d) : d, s, n);
	}
	return (thread_ns() - t0) / double(calls);
}

// Times candidates a and b at size n, interleaved sample by sample (the
// order alternates), in cfg.blocks blocks of cfg.samples each.
void compare(const Config &cfg, bool set, char *d, const char *s, size_t n, const MemParams &a,
	     const MemParams &b, Timing *ta, Timing *tb)
{
	size_t calls = std::max<size_t>(1, cfg.sample_bytes / n);
	std::vector<std::vector<double>> sa(cfg.blocks), sb(cfg.blocks);
	mem_params = a;   // warm-up
	sample(set, d, s, n, calls);
	for (int k = 0; k < cfg.blocks; k++)
		for (int i = 0; i < cfg.samples; i++)
			for (int j = 0; j < 2; j++) {
				bool first = (i + j) % 2 == 0;
				mem_params = first ? a : b;
				(first ? sa : sb)[k].push_back(sample(set, d, s, n, calls));
			}
	*ta = summarize(sa);
	*tb = summarize(sb);
}

std::vector<uint64_t> rep_sizes(bool quick)
{
	// Finer from 16 to 32 KiB: where source and destination outgrow an
	// L1d of 32-48 KiB, the vector copy loop falls off within 2 KiB (Zen 5
	// guest: 0.64x rep movsb's time at 24 KiB, 1.84x at 28 KiB).
	if (quick)
		return {1024, 2048, 3072, 4096, 8192, 16384, 24576, 28672, 32768, 65536, 262144, 1 << 20, 4 << 20};
	return {512, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 20480, 24576, 26624, 28672,
		32768, 49152, 65536, 131072, 262144, 524288, 1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20,
		32 << 20};
}

std::vector<uint64_t> nt_sizes(bool quick)
{
	if (quick)
		return {4 << 20, 16 << 20, 64 << 20};
	return {1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20, 32 << 20, 64 << 20, 128 << 20};
}

std::vector<RepRow> measure_rep(const Config &cfg, bool set, void *fn, Buffers &buf)
{
	std::vector<RepRow> rows;
	if (set) g_set = reinterpret_cast<SetFn>(fn);
	else g_copy = reinterpret_cast<CopyFn>(fn);
	for (uint64_t n : rep_sizes(cfg.quick)) {
		RepRow r;
		r.size = n;
		if (g_cold)
			g_cold->for_size(n);
		for (int a = 0; a < align_count; a++) {
			// Misaligned: dst + 1, src + 3, as uarch-bench mem.
			char *d = buf.dst + (a == misaligned ? 1 : 0);
			const char *s = buf.src + (a == misaligned ? 3 : 0);
			compare(cfg, set, d, s, n, loop_params(), rep_params(), &r.loop[a], &r.rep[a]);
		}
		rows.push_back(r);
	}
	return rows;
}

// Non-temporal stores against the cached candidates: the vector loop, and
// with ERMS rep movsb/stosb too, each timed against streaming in its own
// interleaved pair; a row keeps the faster cached one and its pair's NT
// time. Against the loop alone the Zen 5 guest streamed from 8 MiB, where
// its rep movsb copies 16-64 MiB 1.2-1.3x faster than NT and leaves more
// of the L3 to others (its rep stosb: 0.39-0.87x of NT's time to 32 MiB).
std::vector<NtRow> measure_nt(const Config &cfg, bool set, void *fn, Buffers &buf, bool erms)
{
	std::vector<NtRow> rows;
	if (set) g_set = reinterpret_cast<SetFn>(fn);
	else g_copy = reinterpret_cast<CopyFn>(fn);
	Config c = cfg;
	c.sample_bytes = 0;   // one call per sample: these sizes take milliseconds
	for (uint64_t n : nt_sizes(cfg.quick)) {
		NtRow r;
		r.size = n;
		compare(c, set, buf.dst, buf.src, n, loop_params(), nt_params(), &r.temporal, &r.nt);
		if (erms) {
			Timing rep, nt;
			compare(c, set, buf.dst, buf.src, n, rep_params(), nt_params(), &rep, &nt);
			if (rep.ns > 0 && rep.ns < r.temporal.ns) {
				r.temporal = rep;
				r.nt = nt;
				r.rep_base = true;
			}
		}
		rows.push_back(r);
	}
	return rows;
}

// Random 256-byte records of a table well past the L3; each batch of 16 is
// prefetched (prefetch_range at the stride tried) one batch before it is
// summed, as uarch-bench sync's prefetch case. Stride 0: no prefetch.
std::vector<StrideRow> measure_stride(const Config &cfg, RangeFn range)
{
	size_t table = size_t(cfg.quick ? 128 : 512) << 20;
	constexpr size_t rec = 256, batch = 16;
	size_t nrec = table / rec, walk = cfg.quick ? 4096 : 16384;
	auto *base = static_cast<uint64_t *>(mmap(nullptr, table, PROT_READ | PROT_WRITE,
						  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	if (base == MAP_FAILED)
		die("cannot map the prefetch table");
	std::memset(base, 3, table);
	std::mt19937_64 rng(42);
	std::vector<const uint64_t *> order(walk + batch);
	for (auto &p : order)
		p = base + (rng() % nrec) * (rec / 8);
	const uint32_t strides[] = {0, 64, 128, 256};
	std::vector<std::vector<std::vector<double>>> s(4, std::vector<std::vector<double>>(cfg.blocks));
	volatile uint64_t sink = 0;
	for (int k = 0; k < cfg.blocks; k++)
		for (int i = 0; i < cfg.samples; i++)
			for (int j = 0; j < 4; j++) {
				int c = (j + i) % 4;
				if (strides[c])
					set_prefetch_stride(strides[c]);
				// A fresh random walk per sample: nothing left in the cache.
				for (auto &p : order)
					p = base + (rng() % nrec) * (rec / 8);
				double t0 = thread_ns();
				uint64_t sum = 0;
				for (size_t b = 0; b + batch < order.size(); b += batch) {
					if (strides[c])
						for (size_t q = 0; q < batch; q++)
							range(order[b + batch + q], rec);
					// One dependent chain through every word: the
					// CPU cannot overlap the misses by itself.
					for (size_t q = 0; q < batch; q++)
						for (size_t w = 0; w < rec / 8; w++)
							sum = (sum ^ order[b + q][w]) * 0x9e3779b97f4a7c15ull;
				}
				s[c][k].push_back((thread_ns() - t0) / double(walk));
				sink = sink + sum;
			}
	munmap(base, table);
	std::vector<StrideRow> rows;
	for (int c = 0; c < 4; c++) {
		StrideRow r;
		r.stride = strides[c];
		r.t = summarize(s[c]);
		rows.push_back(r);
	}
	return rows;
}

long futex(std::atomic<uint32_t> *w, int op, uint32_t v)
{
	return syscall(SYS_futex, reinterpret_cast<uint32_t *>(w), op, v, nullptr, nullptr, 0);
}

// FUTEX_WAKE until the sleeper runs again, wall time: what a spinning
// waiter saves by not sleeping.
Timing measure_futex(const Config &cfg)
{
	std::atomic<uint32_t> word{0}, asleep{0};
	std::atomic<double> woke_at{0};
	int rounds = cfg.quick ? 30 : 100;
	std::vector<std::vector<double>> s(cfg.blocks);
	std::thread sleeper([&] {
		for (int k = 0; k < cfg.blocks * rounds; k++) {
			asleep.store(1);
			while (word.load() == 0)
				futex(&word, FUTEX_WAIT_PRIVATE, 0);
			woke_at.store(wall_ns());
			word.store(0);
			asleep.store(0);
		}
	});
	for (int k = 0; k < cfg.blocks; k++)
		for (int i = 0; i < rounds; i++) {
			while (asleep.load() == 0)
				sched_yield();
			// Let it reach FUTEX_WAIT (a sleep of 200 us is ample).
			timespec ts{0, 200000};
			nanosleep(&ts, nullptr);
			woke_at.store(0);
			double t0 = wall_ns();
			word.store(1);
			futex(&word, FUTEX_WAKE_PRIVATE, 1);
			while (woke_at.load() == 0)
				sched_yield();
			s[k].push_back(woke_at.load() - t0);
			while (asleep.load() == 1 && word.load() != 0)
				sched_yield();
		}
	sleeper.join();
	return summarize(s);
}

std::string cpu_name()
{
	FILE *f = std::fopen("/proc/cpuinfo", "r");
	std::string name = "unknown CPU";
	if (!f)
		return name;
	char line[512];
	while (std::fgets(line, sizeof line, f))
		if (!std::strncmp(line, "model name", 10)) {
			const char *c = std::strchr(line, ':');
			if (c) {
				name = c + 2;
				name.erase(name.find_last_not_of("\n ") + 1);
			}
			break;
		}
	std::fclose(f);
	return name;
}

void print_rep(const char *op, const char *variant, const std::vector<RepRow> &rows, const char *rep)
{
	std::printf("%-7s %-8s %10s  %10s %10s %6s  %10s %10s %6s\n", op, variant, "size", "loop ns", rep, "ratio",
		    "loop+1 ns", "rep+1 ns", "ratio");
	for (const RepRow &r : rows)
		std::printf("%-7s %-8s %10" PRIu64 "  %10.1f %10.1f %6.2f  %10.1f %10.1f %6.2f\n", op, variant, r.size,
			    r.loop[0].ns, r.rep[0].ns, r.loop[0].ns / r.rep[0].ns, r.loop[1].ns, r.rep[1].ns,
			    r.loop[1].ns / r.rep[1].ns);
}

void plot(const std::string &png, const std::vector<RepRow> &movsb, const std::vector<RepRow> &stosb,
	  const std::string &title)
{
	using tools::gp_quote;
	std::string why;
	bool ok = tools::draw_plot(png, [&](const std::string &dir, const std::string &out) {
		std::string dat = dir + "/rep.dat";
		if (FILE *f = std::fopen(dat.c_str(), "w")) {
			for (size_t i = 0; i < movsb.size(); i++)
				std::fprintf(f, "%" PRIu64 " %f %f %f %f\n", movsb[i].size,
					     movsb[i].loop[0].ns / movsb[i].rep[0].ns, movsb[i].loop[1].ns / movsb[i].rep[1].ns,
					     i < stosb.size() ? stosb[i].loop[0].ns / stosb[i].rep[0].ns : 0,
					     i < stosb.size() ? stosb[i].loop[1].ns / stosb[i].rep[1].ns : 0);
			std::fclose(f);
		}
		return "set terminal pngcairo size 1000,600\nset output " + gp_quote(out) +
		       "\nset logscale x 2\nset grid\nset format x '%.0b %BB'\n"
		       "set title 'loop time / rep time (above 1: rep wins)'.\"\\n\"." + gp_quote(title) +
		       "\nset xlabel 'bytes'\nplot " + gp_quote(dat) +
		       " u 1:2 w lp t 'rep movsb, aligned', '' u 1:3 w lp t 'rep movsb, dst+1',"
		       " '' u 1:4 w lp t 'rep stosb, aligned', '' u 1:5 w lp t 'rep stosb, dst+1', 1 notitle lc 'black'\n";
	}, &why);
	if (!ok)
		die(png + ": " + why);
}

// Where write_atomically writes before its rename.
std::string temp_name(const std::string &path) { return path + ".tmp." + std::to_string(getpid()); }

// Write to a temporary file beside path, then rename over it: a process
// that loads uarch meanwhile reads the old profile or the new, never half.
void write_atomically(const std::string &path, const std::string &text, bool make_dirs)
{
	if (make_dirs)
		for (size_t p = path.find('/', 1); p != std::string::npos; p = path.find('/', p + 1))
			if (mkdir(path.substr(0, p).c_str(), 0755) != 0 && errno != EEXIST)
				die("cannot create " + path.substr(0, p) + ": " + std::strerror(errno));
	std::string tmp = temp_name(path);
	int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		die("cannot write " + tmp + ": " + std::strerror(errno));
	fchmod(fd, 0644);   // whatever the umask: the profile is world-readable
	bool ok = write(fd, text.data(), text.size()) == ssize_t(text.size()) && fsync(fd) == 0;
	ok = close(fd) == 0 && ok;
	if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
		int e = errno;
		unlink(tmp.c_str());
		die("cannot write " + path + ": " + std::strerror(e));
	}
}

// The profile at path as it is now ("" where there is none): what a
// write keeps of it.
std::string current_text(const std::string &path)
{
	std::string text;
	FILE *f = std::fopen(path.c_str(), "re");
	if (!f)
		return text;
	char buf[4096];
	for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;)
		text.append(buf, n);
	std::fclose(f);
	return text;
}

// Before measuring: whether write_atomically can put the profile at
// path, so that a bad --output is one line at the start, not after
// minutes of measuring. The probe is the temporary file it will make, in
// path's directory (with make_dirs: the nearest one that exists), removed
// again: nothing the user has is touched.
void check_output(const std::string &path, bool make_dirs)
{
	struct stat st;
	if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
		die("--output wants a file name, got the directory '" + path + "'");
	auto parent = [](const std::string &p) {
		size_t slash = p.rfind('/');
		return slash == std::string::npos ? std::string(".") : slash == 0 ? std::string("/") : p.substr(0, slash);
	};
	std::string dir = parent(path);
	while (make_dirs && access(dir.c_str(), F_OK) != 0 && dir.size() > 1)
		dir = parent(dir);
	std::string probe = dir + "/" + temp_name(path.substr(path.rfind('/') + 1));
	int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		die("cannot write " + path + ": " + std::strerror(errno));
	close(fd);
	unlink(probe.c_str());
}

// --section NAME --entries STRING: one program's section set (or
// removed), every other line of the profile kept.
int write_section(const Config &cfg)
{
	if (!tune::section_name_ok(cfg.section_name))
		die("--section '" + cfg.section_name + "': a file name of 1-63 characters, none of them blank, '/', ':', '=', '[', ']' or '#'");
	if (cfg.output.empty())
		die("--section writes a profile: give --install or --output FILE");
	if (cfg.quick || cfg.cold || !cfg.plot.empty())
		die("--section measures nothing: no --quick, --cold or --plot");
	for (char c : cfg.entries)
		if (c == '\n' || c == '[' || c == '#')
			die("--entries: entries separated by ':', without newlines, '[' or '#'");
	const std::string old = current_text(cfg.output);
	write_atomically(cfg.output, tune::with_section(old, cfg.section_name, cfg.entries), cfg.install);
	std::printf("%s [%s] in %s\n", cfg.entries.empty() ? "removed" : "wrote", cfg.section_name.c_str(),
		    cfg.output.c_str());
	return 0;
}

void usage()
{
	std::printf("usage: uarch-tune [--quick] [--cold] [--plot FILE.png] [--output FILE | --install] [--noise-limit PERCENT]\n"
		    "  measures this machine's crossovers and prints the evidence and the profile\n"
		    "  --cold           decides the rep windows on copies and fills into memory out of the cache\n"
		    "                   (for programs whose destinations are fresh allocations, not reused buffers)\n"
		    "  --install        writes the system profile %s (its per-program sections kept)\n"
		    "  --output FILE    writes the profile to FILE\n"
		    "  --section NAME --entries STRING\n"
		    "                   measures nothing: sets the section [NAME] of the profile (--install or\n"
		    "                   --output) to STRING's entries (a:b), or removes it where STRING is empty\n"
		    "  --noise-limit P  refuses to decide above P%% median spread of repeated medians (default 10)\n",
		    UARCH_PROFILE_PATH);
}

// The command line into cfg, checked as far as it can be before anything
// is measured; false where --help was asked for (the usage printed).
bool parse_args(int argc, char **argv, Config &cfg)
{
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		auto value = [&](const char *name) -> std::string {
			if (i + 1 >= argc || !*argv[i + 1])
				die(std::string(name) + " needs a value");
			return argv[++i];
		};
		if (a == "--quick") cfg.quick = true;
		else if (a == "--cold") cfg.cold = true;
		else if (a == "--install") cfg.install = true;
		else if (a == "--output") cfg.output = value("--output");
		else if (a == "--plot") cfg.plot = value("--plot");
		else if (a == "--section") cfg.section_name = value("--section"), cfg.section = true;
		else if (a == "--entries") {
			if (i + 1 >= argc)
				die("--entries needs a value (\"\" removes the section)");
			cfg.entries = argv[++i];
		}
		else if (a == "--noise-limit") {
			std::string v = value("--noise-limit");
			char *end = nullptr;
			double p = std::strtod(v.c_str(), &end);
			if (v.empty() || *end || !(p > 0 && p <= 1000))
				die("--noise-limit wants a percentage above 0, got '" + v + "'");
			cfg.noise_limit = p / 100;
		} else if (a == "--help" || a == "-h") {
			usage();
			return false;
		} else
			die("unknown argument '" + a + "' (see --help)");
	}
	if (cfg.install && !cfg.output.empty())
		die("--install and --output both name where the profile goes: give one");
	if (cfg.output.empty() && cfg.install)
		cfg.output = UARCH_PROFILE_PATH;
	if (!cfg.output.empty() && cfg.output.back() == '/')
		die("--output wants a file name, got '" + cfg.output + "'");
	if (!cfg.output.empty())
		check_output(cfg.output, cfg.install);
	return true;
}

// What the measurements run against: this CPU and what the policy binds
// on it with no tunables set (the profile adjusts that binding).
struct Host {
	Cpu cpu;
	Plan plan;
	Impl bound_copy, bound_set;
	bool erms;
	std::string title;   // the CPU, for the header, the profile's comment and the plot
};

// The plan: the CPU probed, the policy's binding, the sample sizes;
// printed as the header, so that the evidence says what it was taken on.
Host plan_run(Config &cfg)
{
	if (cfg.quick) {
		cfg.samples = 3;
		cfg.sample_bytes = 512u << 10;
	}
	Host h;
	probe_host(&h.cpu, getauxval(AT_HWCAP), getauxval(AT_HWCAP2));
	h.cpu.cpus_allowed = 0;
	Tunables none;
	parse_tunables(nullptr, 0, &none);
	select_plan(h.cpu, none, &h.plan);
	h.bound_copy = h.plan.impl[op_memcpy], h.bound_set = h.plan.impl[op_memset];
	h.erms = h.cpu.has(f_erms);
	h.title = cpu_name() + " (family 0x" + [&] {
		char b[32];
		std::snprintf(b, sizeof b, "%x model 0x%x", h.cpu.family, h.cpu.model);
		return std::string(b);
	}() + ")";
	std::printf("uarch-tune%s%s on %s; the policy binds memcpy=%s memset=%s\n", cfg.quick ? " --quick" : "",
		    cfg.cold ? " --cold" : "",
		    h.title.c_str(), impl_name(h.bound_copy), impl_name(h.bound_set));
	std::printf("times: ns per call, medians of %d blocks x %d samples (thread CPU time); ratio = loop/rep, above 1: rep wins\n",
		    cfg.blocks, cfg.samples);
	return h;
}

// --cold: the pool the rep windows' destinations rotate through, mapped
// and touched before the timing, and g_cold pointed at it.
void start_cold(Config &cfg, ColdSlots &cold)
{
	long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
	cold.len = tools::cold_pool_bytes();
	void *m = mmap(nullptr, cold.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		die("cannot map " + std::to_string(cold.len >> 20) + " MiB for --cold");
	cold.pool = static_cast<char *>(m);
	std::memset(cold.pool, 1, cold.len);
	g_cold = &cold;
	// Copies at the memory's pace vary more from call to call: more
	// of them a sample (Zen 5 guest, --quick: the median spread went
	// from 8.6-11% at 512 KiB a sample to below 5% at 8 MiB).
	cfg.sample_bytes = std::max<size_t>(cfg.sample_bytes, 8u << 20);
	std::printf("--cold: each call's destination out of the cache (a %zu MiB pool, in random order; L3 %s)\n",
		    cold.len >> 20, l3 > 0 ? tools::size_text(uint64_t(l3)).c_str() : "not reported");
}

// The rep windows, each variant's rows printed as they come; the bound
// variants' rows are the evidence.
void run_rep(const Config &cfg, const Host &h, Buffers &buf, Evidence &ev)
{
	// The full run shows every variant the CPU runs; the decision uses the
	// variant the policy binds (the profile's thresholds are shared).
	const Impl variants[] = {Impl::gpr, Impl::baseline, Impl::avx2, Impl::avx512};
	for (Impl v : variants) {
		bool is_copy = v == h.bound_copy, is_set = v == h.bound_set;
		if (!impl_runs_on(op_memcpy, v, h.cpu)) {
			std::printf("%-8s skipped: this CPU cannot run it\n", impl_name(v));
			continue;
		}
		if (!h.erms) {
			std::printf("%-8s no ERMS: rep movsb/stosb are never used\n", impl_name(v));
			break;
		}
		if (cfg.quick && !is_copy && !is_set)
			continue;
		if (impl_fn(op_memcpy, v) != impl_fn(op_memmove, v))
			std::printf("note: memmove_%s is not memcpy_%s: its forward path shares the window, not measured apart\n",
				    impl_name(v), impl_name(v));
		auto copy = measure_rep(cfg, false, impl_fn(op_memcpy, v), buf);
		print_rep("memcpy", impl_name(v), copy, "movsb ns");
		auto set = measure_rep(cfg, true, impl_fn(op_memset, v), buf);
		print_rep("memset", impl_name(v), set, "stosb ns");
		if (is_copy) ev.movsb = copy;
		if (is_set) ev.stosb = set;
	}
	std::printf("(memmove is the memcpy entry in every x86-64 variant: the memcpy rows are its forward path)\n");
}

// The non-temporal sizes on the bound variants, then their table.
void run_nt(const Config &cfg, const Host &h, Buffers &buf, Evidence &ev)
{
	// The threshold is decided on copies (what glibc's rule is about);
	// fills stream past it only where that beats rep stosb too.
	ev.nt = measure_nt(cfg, false, impl_fn(op_memcpy, h.bound_copy), buf, h.erms);
	g_fill_byte = 0x5a;   // decides nt_fill_threshold; zero fills follow the copies'
	ev.nt_set = measure_nt(cfg, true, impl_fn(op_memset, h.bound_set), buf, h.erms);
	g_fill_byte = -1;
	std::printf("non-temporal against cached stores (memset: byte 0x5a, its own threshold; zero fills follow memcpy's)\n");
	std::printf("%-7s %-8s %10s  %10s %-5s %10s %6s\n", "nt", "variant", "size", "cached ns", "by", "nt ns", "ratio");
	for (const auto *rows : {&ev.nt, &ev.nt_set}) {
		bool set = rows == &ev.nt_set;
		for (const NtRow &r : *rows)
			std::printf("%-7s %-8s %10" PRIu64 "  %10.0f %-5s %10.0f %6.2f\n", set ? "memset" : "memcpy",
				    impl_name(set ? h.bound_set : h.bound_copy), r.size, r.temporal.ns,
				    r.rep_base ? "rep" : "loop", r.nt.ns, r.temporal.ns / r.nt.ns);
	}
}

// The prefetch stride and the futex wake-up, each printed as measured.
void run_stride_futex(const Config &cfg, const Host &h, Evidence &ev)
{
	const Impl range = h.plan.impl[op_prefetch_range];
	ev.stride = measure_stride(cfg, reinterpret_cast<RangeFn>(impl_fn(op_prefetch_range, range)));
	std::printf("prefetch_range (%s), random 256-byte records: ns per record\n", impl_name(range));
	for (const StrideRow &r : ev.stride)
		std::printf("  stride %-4s %8.1f\n", r.stride ? std::to_string(r.stride).c_str() : "none", r.t.ns);
	ev.stride.erase(ev.stride.begin());   // "none" is shown, not a candidate

	ev.futex_wake = measure_futex(cfg);
	ev.want_spin = true;
	for (int i = 0; i < h.plan.idle.nstages; i++)
		if (h.plan.idle.stages[i] != Stage::spin && h.plan.idle.stages[i] != Stage::futex)
			ev.want_spin = false;   // a monitor stage follows the spin: the spin stays short
	std::printf("futex wake-up to the sleeper running: %.1f us%s\n", ev.futex_wake.ns / 1000,
		    ev.want_spin ? "" : " (a monitor stage follows the spin: spin budget not set)");
}

// The run: every measurement in order, its evidence printed as it comes
// and returned for the decision.
Evidence run(Config &cfg, const Host &h)
{
	Evidence ev;
	Buffers buf(nt_sizes(cfg.quick).back());
	ColdSlots cold;
	if (cfg.cold)
		start_cold(cfg, cold);
	run_rep(cfg, h, buf, ev);
	g_cold = nullptr;   // the non-temporal sizes fill the caches themselves
	run_nt(cfg, h, buf, ev);
	run_stride_futex(cfg, h, ev);
	return ev;
}

// The rules the decision follows: the noise limit asked for, and the
// policy's own thresholds as the bounds a profile moves within.
Rules rules_for(const Config &cfg, const Plan &plan)
{
	Rules rules;
	rules.noise_limit = cfg.noise_limit;
	// The built-in threshold (decide.h): a profile may start streaming
	// later than the policy, never earlier.
	rules.nt_floor = plan.mem.nt_min;
	rules.nt_fill_floor = plan.mem.nt_fill_min ? plan.mem.nt_fill_min : plan.mem.nt_min;
	auto policy = [](uint64_t min, uint64_t max) {
		return Window{min, min ? std::min<uint64_t>(max, Window::open) : 0};
	};
	rules.movsb_policy = policy(plan.mem.movsb_min, plan.mem.movsb_max);
	rules.stosb_policy = policy(plan.mem.stosb_min, plan.mem.stosb_max);
	return rules;
}

// Why the decision is what it is where the evidence alone does not say:
// the floors and built-in windows it kept, and the noise it saw.
void explain(const Config &cfg, const Rules &rules, const Profile &p)
{
	std::printf("non-temporal: never below the built-in %" PRIu64 " KiB (a reused buffer may fit the cache there)\n",
		    rules.nt_floor >> 10);
	for (auto [name, kept, w] : {std::tuple{"rep movsb", p.movsb_kept, p.movsb}, std::tuple{"rep stosb", p.stosb_kept, p.stosb}})
		if (kept)
			std::printf("%s: the built-in window [%s, %s) kept: no size timed in it has rep slower by the margin\n",
				    name, tools::size_text(w.min).c_str(), tools::size_text(w.max).c_str());
	for (auto [name, end, w] : {std::tuple{"rep movsb", p.movsb_wins_end, rules.movsb_policy},
				    std::tuple{"rep stosb", p.stosb_wins_end, rules.stosb_policy}})
		if (end)
			std::printf("%s: its wins end at %s; it runs on to the built-in window's end %s: no size timed "
				    "between has rep slower by the margin\n",
				    name, tools::size_text(end).c_str(), tools::size_text(w.max).c_str());
	std::printf("noise: median spread of repeated medians %.1f%%, largest %.1f%% (limit %.1f%%)\n", p.noise * 100,
		    p.noise_max * 100, cfg.noise_limit * 100);
}

// A decided profile printed, and written to --output / --install with a
// comment line saying how and when it was measured.
void write_profile(const Config &cfg, const Host &h, const Profile &p)
{
	std::string prof = profile_string(p);
	std::printf("profile:\nUARCH_TUNABLES=%s\n", prof.c_str());
	if (cfg.output.empty())
		return;
	char when[64];
	time_t now = time(nullptr);
	strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&now));
	char noise[96];
	std::snprintf(noise, sizeof noise, "noise %.1f%% (median spread of repeated medians)", p.noise * 100);
	std::string text = "# uarch-tune" + std::string(cfg.quick ? " --quick" : "") +
			   std::string(cfg.cold ? " --cold" : "") + " on " + h.title + ", " +
			   when + ", " + noise + "\n" + prof + "\n";
	write_atomically(cfg.output, tune::with_global(current_text(cfg.output), text), cfg.install);
	std::printf("written to %s\n", cfg.output.c_str());
}

// The decision on the evidence, explained, written and plotted; the exit
// status: 2 where it was too noisy to decide.
int report(const Config &cfg, const Host &h, const Evidence &ev)
{
	Rules rules = rules_for(cfg, h.plan);
	Profile p = decide(ev, rules);
	explain(cfg, rules, p);
	if (!p.too_noisy)
		write_profile(cfg, h, p);
	// Last, so that nothing decided is lost if gnuplot fails; drawn when
	// too noisy to decide as well: the evidence is still worth a look.
	if (!cfg.plot.empty()) {
		std::fflush(stdout);
		plot(cfg.plot, ev.movsb, ev.stosb, h.title);
	}
	if (p.too_noisy) {
		std::fflush(stdout);
		std::fprintf(stderr, "uarch-tune: too noisy to decide: median spread of repeated medians %.1f%% > limit %.1f%%; no profile written\n",
			     p.noise * 100, cfg.noise_limit * 100);
		return 2;
	}
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	uarch::tools::check_stdout_at_exit("uarch-tune");
	Config cfg;
	if (!parse_args(argc, argv, cfg))
		return 0;
	if (cfg.section)
		return write_section(cfg);
	if (!cfg.entries.empty())
		die("--entries goes with --section NAME");
	// Before measuring: a plot that cannot be drawn is said now, not
	// after the run.
	std::string why;
	if (!cfg.plot.empty() && !tools::can_plot(cfg.plot, &why))
		die(why);
	const Host host = plan_run(cfg);
	const Evidence ev = run(cfg, host);
	return report(cfg, host, ev);
}
