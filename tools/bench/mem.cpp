// uarch-bench mem: uarch_memcpy/memmove/memset against the C library's, in
// one process, each called through a volatile function pointer (so neither
// is inlined or specialised). Each case is one benchmark whose sides run
// in paired rounds (paired.h: a sample of uarch, then one of the C
// library, repeated), so drift in clock or load hits both alike; the table
// gives each side's median time and the median of the rounds' ratios
// (--min: the fastest rounds). Time is the thread's CPU time, which a busy
// machine disturbs less than wall time.
//
// Cases, each aligned (dst and src 64-byte aligned) and misaligned (dst+1,
// src+3; memset dst+1):
//   uniform random sizes 0-16, 0-64, 0-256, 0-1024, 0-4096;
//   "fleet": a size mix modelled on Google's fleet-wide memcpy profile
//     (Chatelet et al., "automemcpy: A Framework for Automatic Generation
//     of Fundamental Memory Operations", ISMM 2021, fig. 1 and the
//     distributions published with llvm-libc's benchmarks): about 96% of
//     calls are <= 128 bytes, most of them <= 64; see fleet_size();
//   fixed sizes: powers of two 1..8192 and 3, 7, 33, 100, 255, 1000, 3000;
//   "pageend1-63": random sizes 1-63 whose dst ends at a page's end;
//   large: 64 KiB .. 64 MiB (few iterations); memset fills the byte 0x5a
//     there, and "zero" rows of the same sizes fill zeros: some machines
//     stream zeros much faster than other bytes (on the Zen 4 guest 3x
//     through non-temporal stores, and 2x through rep stosb at 32 MiB).
//   "cold4K" .. "cold256K": fixed sizes into a destination out of the
//     cache (cold_work), from a hot source.
// Random sizes and offsets are drawn before timing, 65536 calls a batch.
//
// Placement: src - dst = 1088 (1024 + 64) modulo 4096 for every call. A
// forward copy's load then matches the low 12 bits of an earlier store only
// if that store was 3008 bytes back (long retired), so neither side gets
// 4 KiB-aliasing stalls that the other escapes, and no case puts src and
// dst at the same page offset (which flatters some strategies).
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <random>
#include <string>
#include <vector>
#include "bench.h"
#include "common/cold_slots.h"
#include "common/gnuplot.h"
#include "common/stats.h"
#include "paired.h"
#include "profile_replay.h"
#include "trace_replay.h"
#include "report.h"
#include "uarch.h"

namespace {

using CopyFn = void *(*)(void *, const void *, size_t);
using SetFn = void *(*)(void *, int, size_t);

enum Op { op_memcpy, op_memmove, op_memset };
const char *const op_names[] = {"memcpy", "memmove", "memset"};
// The sides each case compares; --preload makes them "shared" and
// "preload", and adds the C library's as a third.
const char *side_names[] = {"libc", "uarch", "libc"};
int g_sides = 2;

// [op][side]: read on every call, so the compiler cannot see through them.
CopyFn volatile g_copy[3][3];
SetFn volatile g_set[3];

// 64 Ki calls a batch: a shorter repeating sequence of random sizes is
// learnt by the branch predictor (Zen 3 predicts a 4096-call sequence of
// sizes 0-64 almost perfectly), and the benchmark would then hide the
// mispredictions that real callers pay.
constexpr size_t kBatch = 1 << 16;
constexpr size_t kAlias = 1088;   // src - dst modulo 4096

struct Work {
	std::vector<uint32_t> size;        // per call: size
	std::vector<uint16_t> off;         // per call: offset from the bases
	std::vector<uint16_t> soff;        // per call: the source's, when it differs (profiles)
	std::vector<uint32_t> far, src0;   // cold cases: dst offsets far apart, and the source's (all 0)
	size_t dmis = 0, smis = 0;         // misalignment added to dst, src
	int fill = 0;                      // memset's byte: the call's index plus this
};

struct Buffers {
	char *src = nullptr, *dst = nullptr;
	// Regions of `len` bytes (dst) and `slen` bytes (src, default len) with
	// src - dst == kAlias (mod 4096).
	explicit Buffers(size_t len, size_t slen = 0)
	{
		if (slen == 0)
			slen = len;
		size_t total = len + slen + 3 * 4096 + kAlias;
		void *m = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED) {
			perror("mmap");
			exit(1);
		}
		dst = static_cast<char *>(m);
		src = dst + (len + 4095) / 4096 * 4096 + 4096 + kAlias;
		memset(dst, 1, total);   // fault every page in before timing
		for (size_t i = 0; i < slen; i++)
			src[i] = char(i * 7);
	}
};

// Fleet-like size: a piecewise-uniform model of the published profile.
// 25% 0-8, 30% 9-32, 25% 33-64, 16% 65-128 (96% <= 128), 3% 129-1024,
// 1% 1025-4096.
uint32_t fleet_size(std::mt19937_64 &rng)
{
	struct Band { uint32_t pct, lo, hi; };
	static const Band bands[] = {{25, 0, 8}, {30, 9, 32}, {25, 33, 64}, {16, 65, 128}, {3, 129, 1024}, {1, 1025, 4096}};
	uint32_t r = uint32_t(rng() % 100);
	for (const Band &b : bands) {
		if (r < b.pct)
			return b.lo + uint32_t(rng() % (b.hi - b.lo + 1));
		r -= b.pct;
	}
	return 0;
}

Work random_work(uint32_t max, bool fleet, bool misaligned, uint64_t seed)
{
	std::mt19937_64 rng(seed);
	Work w;
	for (size_t i = 0; i < kBatch; i++) {
		uint32_t n = fleet ? fleet_size(rng) : uint32_t(rng() % (max + 1));
		w.size.push_back(n);
		w.off.push_back(uint16_t(rng() % 64 * 64));   // a cache line of a 4 KiB window
	}
	w.dmis = misaligned ? 1 : 0;
	w.smis = misaligned ? 3 : 0;
	return w;
}

Work fixed_work(size_t n, size_t calls, bool misaligned)
{
	Work w;
	w.size.assign(calls, uint32_t(n));
	// Successive calls start on every cache line of a 4 KiB window in turn
	// (17 is odd, so i * 17 mod 64 visits all 64), as the random cases do:
	// no single placement (its 4 KiB aliasing with the caller's stack or
	// with these arrays) decides a row.
	for (size_t i = 0; i < calls; i++)
		w.off.push_back(uint16_t(calls > 1 ? i * 17 % 64 * 64 : 0));
	w.dmis = misaligned ? 1 : 0;
	w.smis = misaligned ? 3 : 0;
	return w;
}

// Random sizes 1-63 whose dst ends at a page's end (the next page mapped;
// src inside a page): a 64-byte masked store there crosses into the next
// page, which some CPUs pay for with a microcode assist even where the
// bytes across are masked off.
Work page_end_work(uint64_t seed)
{
	std::mt19937_64 rng(seed);
	Work w;
	for (size_t i = 0; i < kBatch; i++) {
		uint32_t n = uint32_t(1 + rng() % 63);
		w.size.push_back(n);
		w.off.push_back(uint16_t(4096 * (1 + i % 3) - n));
	}
	return w;
}

// A cold destination (common/cold_slots.h) from a hot source (64-byte
// aligned plus 3); dst at +5 modulo 64, as an allocator's would be.
Work cold_work(size_t n, size_t pool, uint64_t seed)
{
	Work w;
	w.far = uarch::tools::cold_slots(n, pool, seed);
	for (uint32_t &o : w.far)
		o += 5;
	w.size.assign(w.far.size(), uint32_t(n));
	w.src0.assign(w.far.size(), 0);
	w.smis = 3;
	return w;
}

// One case: its calls, buffers, and the paired rounds' result.
struct Case {
	Op op;
	const Work *w;
	const Buffers *b;
	paired::Result res;
	double libc_preload = NAN;   // --preload: C library / preload entries, a pair of its own
};

void run(benchmark::State &st, Case *c, int rounds, double budget_ns, bool use_min)
{
	const Work *w = c->w;
	char *d = c->b->dst + w->dmis;
	const char *s = c->b->src + w->smis;
	const uint32_t *size = w->size.data();
	const uint16_t *off = w->off.data();
	const size_t calls = w->size.size();
	const Op op = c->op;
	// The pointers from a volatile: opaque to the compiler, so the calls
	// stay indirect.
	auto batch = [&](size_t side) {
		if (!w->far.empty()) {
			if (op == op_memset)
				paired::set_batch(g_set[side], d, size, w->far.data(), calls, w->fill);
			else
				paired::copy_batch(g_copy[op][side], d, s, size, w->far.data(), w->src0.data(), calls);
		} else if (op == op_memset)
			paired::set_batch(g_set[side], d, size, off, calls, w->fill);
		else
			paired::copy_batch(g_copy[op][side], d, s, size, off, w->soff.empty() ? off : w->soff.data(), calls);
	};
	for (auto _ : st) {
		c->res = paired::run(size_t(g_sides), calls, batch, rounds, budget_ns, use_min);
		if (g_sides == 3)   // [shared, preload, libc]: libc against preload too
			c->libc_preload = paired::run(2, calls, [&](size_t side) { batch(side ? 1 : 2); }, rounds,
						      budget_ns / 2, use_min).ratio[1];
	}
	for (int j = 0; j < g_sides; j++)
		st.counters[std::string(side_names[j]) + "_ns"] = c->res.ns[j];
	st.counters["rounds"] = double(c->res.rounds);
}

struct Row {
	std::string op, name, align;
	double ns[3] = {NAN, NAN, NAN};   // per call: [libc, uarch], or [shared, preload, libc]
	double q[3] = {1, NAN, NAN};      // the paired ratios: ns[0]'s side / each side
	double lp = NAN;                  // --preload: the C library / the preload library, paired
	double ratio() const { return q[1]; }
	// --preload: the C library's time over the time through libuarch.so,
	// and over the time through the preload library, each from its own
	// pairs.
	double libc_shared() const { return 1 / q[2]; }
	double libc_preload() const { return lp; }
};

// An A/A check in every run: where uarch binds memcpy and memmove to the
// same code (every x86-64 variant; glibc does the same), a memcpy row and
// the memmove row of the same case measure the same thing on both sides,
// and only the machine's noise tells their ratios apart. Returns "" where
// the two are bound apart or fewer than 8 cases pair up. *p90: the 90th
// percentile of the differences (0 where there is no note).
std::string aa_noise(const std::vector<Row> &rows, double *p90)
{
	*p90 = 0;
	if (strcmp(uarch_impl("memcpy"), uarch_impl("memmove")) != 0)
		return "";
	std::map<std::string, double> cpy;
	for (const Row &r : rows)
		if (r.op == "memcpy" && r.align != "recorded")
			cpy[r.name + "/" + r.align] = r.ratio();
	std::vector<double> dev;
	for (const Row &r : rows)
		if (r.op == "memmove" && cpy.count(r.name + "/" + r.align))
			dev.push_back(std::fabs(cpy[r.name + "/" + r.align] / r.ratio() - 1));
	if (dev.size() < 8)
		return "";
	std::sort(dev.begin(), dev.end());
	*p90 = dev[dev.size() * 9 / 10];
	char b[256];
	std::snprintf(b, sizeof b,
		      "noise (A/A): memcpy and memmove run the same code on both sides; their ratios differ by a "
		      "median %.1f%%, 90th percentile %.1f%%, over %zu cases: a single row nearer 1 than that is noise",
		      dev[dev.size() / 2] * 100, *p90 * 100, dev.size());
	return b;
}

// Counts a row into *n and names it with its ratio in *list, the first 12
// only, comma-separated.
void list_row(std::string *list, size_t *n, const Row &r, double ratio)
{
	char b[96];
	snprintf(b, sizeof b, "%s%s/%s/%s %.2f", *n ? ", " : "", r.op.c_str(), r.name.c_str(), r.align.c_str(),
		 ratio);
	if ((*n)++ < 12)
		*list += b;
}

// The rows below 0.97x, and among them those further below it than the
// A/A check's 90th percentile (p90 > 0): a loss that this run's noise does
// not explain. The replays ("recorded") are counted as the rest.
std::string below_note(const std::vector<Row> &rows, double p90)
{
	constexpr double bar = 0.97;
	size_t below = 0, nbeyond = 0;
	std::string beyond;
	for (const Row &r : rows) {
		if (!(r.ratio() < bar))
			continue;
		below++;
		if (p90 > 0 && r.ratio() * (1 + p90) < bar)
			list_row(&beyond, &nbeyond, r, r.ratio());
	}
	char b[160];
	snprintf(b, sizeof b, "rows below %.2f: %zu of %zu", bar, below, rows.size());
	std::string s = b;
	if (p90 > 0) {
		snprintf(b, sizeof b, "; below it by more than the A/A 90th percentile (%.1f%%): %zu", p90 * 100, nbeyond);
		s += b;
		if (nbeyond)
			s += " (" + beyond + (nbeyond > 12 ? ", ..." : "") + ")";
	}
	return s;
}

// --preload LIB: the same variants on both sides, called through
// libuarch.so's uarch_memcpy/memmove/memset (bound by the loader) and
// through LIB's memcpy/memmove/memset (libuarch_preload.so's entries, as an
// LD_PRELOADed program reaches them), so the ratio is what the preload
// entries cost. LIB is opened RTLD_LOCAL: its names do not replace the C
// library's in this process. The C library's functions run as a third
// side, so that each row also says what a program under LIB gains over
// the C library, beside what it would gain through libuarch.so.
bool use_preload_sides(const std::string &lib)
{
	void *h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "uarch-bench mem: --preload %s: %s\n", lib.c_str(), dlerror());
		return false;
	}
	void *cpy = dlsym(h, "memcpy"), *mov = dlsym(h, "memmove"), *set = dlsym(h, "memset");
	using Impl = const char *(*)(const char *);
	auto impl = reinterpret_cast<Impl>(dlsym(h, "uarch_preload_impl"));
	if (!cpy || !mov || !set || !impl) {
		fprintf(stderr, "uarch-bench mem: --preload %s: not a uarch preload library\n", lib.c_str());
		return false;
	}
	for (const char *op : op_names)
		if (strcmp(impl(op), uarch_impl(op)) != 0) {
			fprintf(stderr, "uarch-bench mem: --preload %s binds %s to %s, libuarch.so to %s\n", lib.c_str(), op,
				impl(op), uarch_impl(op));
			return false;
		}
	using Binding = const char *(*)(void);
	auto binding = reinterpret_cast<Binding>(dlsym(h, "uarch_preload_binding"));
	printf("preload entries: %s, binding %s\n", lib.c_str(), binding ? binding() : "?");
	g_copy[op_memcpy][0] = &uarch_memcpy;
	g_copy[op_memcpy][1] = reinterpret_cast<CopyFn>(cpy);
	g_copy[op_memmove][0] = &uarch_memmove;
	g_copy[op_memmove][1] = reinterpret_cast<CopyFn>(mov);
	g_set[0] = &uarch_memset;
	g_set[1] = reinterpret_cast<SetFn>(set);
	g_copy[op_memcpy][2] = &::memcpy;
	g_copy[op_memmove][2] = &::memmove;
	g_set[2] = &::memset;
	side_names[0] = "shared";
	side_names[1] = "preload";
	g_sides = 3;
	return true;
}

bool write_plot(const std::string &png, const std::vector<Row> &rows, std::string *why)
{
	using uarch::tools::gp_quote;
	return uarch::tools::draw_plot(png, [&](const std::string &dir, const std::string &out) {
		std::string dat = dir + "/rows.dat";
		if (FILE *f = fopen(dat.c_str(), "w")) {
			for (size_t i = 0; i < rows.size(); i++)
				fprintf(f, "%zu %.4f \"%s %s %s\" %d\n", i, rows[i].ratio(), rows[i].op.c_str(),
					rows[i].name.c_str(),
					rows[i].align == "aligned" ? "a" : rows[i].align == "misaligned" ? "m" : "r",
					rows[i].op == "memcpy" ? 1 : rows[i].op == "memmove" ? 2 : 3);
			fclose(f);
		}
		int width = std::max(800, int(rows.size()) * 14 + 200);
		std::string title = "uarch vs C library: time(libc) / time(uarch), higher is better";
		std::string sub = cpu_name() + ", glibc " + gnu_get_libc_version();
		char head[128];
		snprintf(head, sizeof head, "set terminal pngcairo size %d,700 font ',9'\n", width);
		return std::string(head) + "set output " + gp_quote(out) + "\nset title " + gp_quote(title) +
		       ".\"\\n\"." + gp_quote(sub) +
		       "\nset ylabel 'ratio'\nset grid ytics\nset xtics rotate by 90 right\n"
		       "set style fill solid 0.8\nset boxwidth 0.8\nset key off\nset xrange [-1:" +
		       std::to_string(rows.size()) + "]\nplot " + gp_quote(dat) +
		       " using 1:2:($4):xtic(3) with boxes lc variable, 1 with lines lc rgb 'black' lw 2\n";
	}, why);
}

} // namespace


// bench_mem's steps: parse the command line, plan the cases, run them,
// report the table.
namespace {

// The command line: report's common flags and mem's own.
struct MemArgs {
	report::Options o;
	std::string stat, preload;
	std::vector<std::string> profiles;   // --profile FILE: replay (profile_replay.cpp)
	std::string trace;                   // --trace FILE: replay in order (trace_replay.cpp)
	bool trace_dump = false;
	int rounds = 0;   // --benchmark_repetitions=N: N paired rounds a case
	std::vector<char *> args;            // the rest, for Google Benchmark
};

// Parses mem's flags out of argv; false (the reason said) means exit 2.
bool parse_mem_args(int argc, char **argv, MemArgs &m)
{
	report::Options &o = m.o;
	o = report::parse(argc, argv);
	m.stat = paired::statistic(o.min);
	m.args = {argv[0]};
	for (size_t i = 1; i < o.rest.size(); i++) {
		std::string a = o.rest[i];
		if (a == "--preload" && i + 1 < o.rest.size()) {
			m.preload = o.rest[++i];
			continue;
		}
		// --profile FILE...: every argument up to the next flag, so that a
		// shell glob (tests/data/profiles/*.uprof) replays them all.
		if (a == "--profile") {
			size_t before = m.profiles.size();
			while (i + 1 < o.rest.size() && o.rest[i + 1][0] != '-')
				m.profiles.push_back(o.rest[++i]);
			if (m.profiles.size() == before) {
				fprintf(stderr, "uarch-bench mem: --profile needs a file (uarch-prof -o FILE records one)\n");
				return false;
			}
			continue;
		}
		if (a == "--trace" || a.rfind("--trace=", 0) == 0) {
			if (a == "--trace" && i + 1 < o.rest.size())
				m.trace = o.rest[++i];
			else if (a != "--trace")
				m.trace = a.substr(8);
			if (m.trace.empty()) {
				fprintf(stderr, "uarch-bench mem: --trace needs a file (uarch-prof --trace N records one)\n");
				return false;
			}
			continue;
		}
		if (a == "--trace-dump") {
			m.trace_dump = true;
			continue;
		}
		if (a.rfind("--profile=", 0) == 0) {
			m.profiles.push_back(a.substr(10));
			continue;
		}
		if (a.rfind("--preload=", 0) == 0) {
			m.preload = a.substr(10);
			continue;
		}
		if (a.rfind("--benchmark_repetitions=", 0) == 0) {
			char *end = nullptr;
			errno = 0;
			long v = strtol(a.c_str() + 24, &end, 10);
			if (errno || end == a.c_str() + 24 || *end || v < 1 || v > 100000) {
				fprintf(stderr, "uarch-bench mem: --benchmark_repetitions wants a count of paired rounds, 1 to 100000, got '%s'\n",
					a.c_str() + 24);
				return false;
			}
			m.rounds = int(v);
			continue;
		}
		if (a.rfind("--benchmark_min_time", 0) == 0) {
			fprintf(stderr, "uarch-bench mem: --benchmark_min_time has no effect here: a sample is about 200 us "
					"(--benchmark_repetitions=N sets the paired rounds)\n");
			return false;
		}
		m.args.push_back(o.rest[i]);
	}
	return true;
}

// The registered cases, in the table's order (as registered, not as run).
struct Plan {
	int rounds = 0;
	double budget_ns = 0;
	bool use_min = false;
	std::vector<std::string> order;  // the table's rows: as registered, not as run
	std::vector<Case *> row_case;    // the same, their cases

	// Registers one case as one benchmark; its Work and Case live to exit.
	void add(Op op, const std::string &name, const std::string &align, Work w, const Buffers *b)
	{
		static std::deque<Work> works;   // push_back keeps addresses stable
		static std::deque<Case> cases;
		works.push_back(std::move(w));
		cases.push_back(Case{op, &works.back(), b, {}});
		Case *cp = &cases.back();
		std::string base = std::string(op_names[op]) + "/" + name + "/" + align;
		order.push_back(base);
		benchmark::RegisterBenchmark(base.c_str(),
			[cp, rounds = rounds, budget_ns = budget_ns, use_min = use_min](benchmark::State &st) {
				run(st, cp, rounds, budget_ns, use_min);
			})
			->Iterations(1)
			->Repetitions(1);
		row_case.push_back(cp);
	}
};

// The synthetic cases (the list atop this file); --quick: a few of them.
void plan_synthetic(Plan &p, bool quick, const std::vector<Op> &ops, const Buffers *small, const Buffers *large)
{
	const uint32_t uniform[] = {16, 64, 256, 1024, 4096};
	std::vector<size_t> fixed = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192,
				     3, 7, 33, 100, 255, 1000, 3000};
	std::vector<size_t> big = {64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20};
	std::vector<bool> aligns = {false, true};
	if (quick) {
		fixed = {8, 100, 4096};
		big = {1 << 20};
		aligns = {false};
	}
	for (Op op : ops)
		for (bool mis : aligns) {
			for (uint32_t m : uniform) {
				if (quick && m != 64 && m != 256)
					continue;
				p.add(op, "uniform0-" + std::to_string(m), mis ? "misaligned" : "aligned", random_work(m, false, mis, 42 + m), small);
			}
			p.add(op, "fleet", mis ? "misaligned" : "aligned", random_work(0, true, mis, 7), small);
			if (mis && !quick)
				p.add(op, "pageend1-63", "page end", page_end_work(63), small);
			for (size_t n : fixed)
				p.add(op, "fixed" + std::to_string(n), mis ? "misaligned" : "aligned", fixed_work(n, n <= 1024 ? 1024 : 128, mis), small);
			for (size_t n : big) {
				std::string k = std::to_string(n >> 10) + "K", al = mis ? "misaligned" : "aligned";
				Work w = fixed_work(n, 1, mis);
				if (op == op_memset) {
					p.add(op, "zero" + k, al, w, large);
					w.fill = 0x5a;
				}
				p.add(op, "large" + k, al, w, large);
			}
		}
	// Cold destinations (cold_work): sizes on either side of where the
	// variants hand over to rep movsb/stosb, whose ranking there can turn
	// over once dst is out of the cache.
	const size_t pool = uarch::tools::cold_pool_bytes();
	static Buffers cold(pool, 256 << 10);
	std::vector<size_t> cold_sizes = {4096, 16384, 32768, 256 << 10};
	if (quick)
		cold_sizes = {16384};
	for (Op op : ops)
		for (size_t n : cold_sizes)
			p.add(op, "cold" + std::to_string(n >> 10) + "K", "cold dst", cold_work(n, pool, 99 + n), &cold);
}

// The committed profiles of real programs (tests/data/profiles,
// uarch-prof), replayed next to the synthetic cases: their recorded
// sizes and both alignments, drawn with a fixed seed; "recorded" in
// the align column. --quick: memcpy only. None found (a build tree
// moved away from its sources, not installed): said, so that the
// geomeans' case counts are not silently smaller. False: one unreadable.
bool plan_profiles(Plan &p, bool quick, const std::vector<Op> &ops, const Buffers *large)
{
	std::vector<std::string> committed = committed_profiles();
	if (committed.empty())
		fprintf(stderr, "uarch-bench mem: no profiles in %s or %s: the replays are left out\n",
			UARCH_PROFILES_SOURCE_DIR, UARCH_PROFILES_INSTALL_DIR);
	for (const std::string &path : committed)
		for (Op op : ops) {
			Work w;
			std::vector<uint32_t> size, doff, soff;
			std::string why;
			if (!profile_batch(path, uint32_t(op), &size, &doff, &soff, &why)) {
				fprintf(stderr, "uarch-bench mem: %s: %s\n", path.c_str(), why.c_str());
				return false;
			}
			if (size.empty() || (quick && op != op_memcpy))
				continue;
			for (size_t i = 0; i < size.size(); i++) {
				w.size.push_back(size[i]);
				w.off.push_back(uint16_t(doff[i]));
				w.soff.push_back(uint16_t(soff[i]));
			}
			std::string name = path.substr(path.rfind('/') + 1);
			p.add(op, "profile-" + name.substr(0, name.size() - 6), "recorded", std::move(w), large);
		}
	return true;
}

// Binds the sides and registers every case; false (the reason said) means
// exit 2. Each case one benchmark, its sides timed in paired rounds
// (paired.h): as many as fit 0.3 s a case (--quick: 0.04 s). On a shared
// machine the load drifts over seconds; before, each side was its own
// benchmark, run as 7 short repetitions in random order across all cases,
// the table taking the medians, and an A/A check (memcpy against memmove,
// the same code on both sides) still differed by a median 4-7% and up to
// 35% on a 2-vCPU Zen 3 guest, 2-5% and p90 10-16% on a Zen 4 one.
bool plan_cases(const MemArgs &m, Plan &p)
{
	const bool quick = m.o.quick;
	p.rounds = m.rounds;
	p.budget_ns = quick ? 4e7 : 3e8;
	p.use_min = m.o.min;

	g_copy[op_memcpy][0] = &::memcpy;
	g_copy[op_memcpy][1] = &uarch_memcpy;
	g_copy[op_memmove][0] = &::memmove;
	g_copy[op_memmove][1] = &uarch_memmove;
	g_set[0] = &::memset;
	g_set[1] = &uarch_memset;
	if (!m.preload.empty() && !use_preload_sides(m.preload))
		return false;

	static Buffers small(16384), large(size_t(64) << 20);
	std::vector<Op> ops = {op_memcpy, op_memmove, op_memset};
	if (quick)
		ops = {op_memcpy, op_memset};
	plan_synthetic(p, quick, ops, &small, &large);
	return plan_profiles(p, quick, ops, &large);
}

// Hands the rest of the command line to Google Benchmark and runs the
// cases; the exit status when that fails, -1 when they ran.
int run_cases(MemArgs &m)
{
	std::vector<char *> &args = m.args;
	int bargc = int(args.size());
	args.push_back(nullptr);
	benchmark::Initialize(&bargc, args.data());
	if (benchmark::ReportUnrecognizedArguments(bargc, args.data()))
		return 2;
	// Check the outputs once the arguments are known good (a rejected
	// command line truncates nothing) and before running, so that a bad
	// path fails before minutes of work.
	if (!report::check_outputs("uarch-bench mem", m.o))
		return 2;
	report::Quiet rep;   // the table is built from the rounds, not from Google Benchmark's times
	rep.show = m.o.rows;
	// None run: Google Benchmark has said why in one line (a
	// --benchmark_filter that matches no case or is no regular expression).
	if (!benchmark::RunSpecifiedBenchmarks(&rep))
		return 2;
	benchmark::Shutdown();
	return -1;
}

// The table's rows: as registered (op/case/align), not as run; the
// filtered out have no result.
std::vector<Row> collect_rows(const Plan &p)
{
	std::vector<Row> done;
	for (size_t i = 0; i < p.order.size(); i++) {
		const std::string &k = p.order[i];
		const paired::Result &res = p.row_case[i]->res;
		if (res.ns.size() != size_t(g_sides))   // filtered out
			continue;
		Row r;
		size_t a = k.find('/'), c = k.rfind('/');
		r.op = k.substr(0, a);
		r.name = k.substr(a + 1, c - a - 1);
		r.align = k.substr(c + 1);
		for (int side = 0; side < g_sides; side++) {
			r.ns[side] = res.ns[side];
			r.q[side] = res.ratio[side];
		}
		r.lp = p.row_case[i]->libc_preload;
		done.push_back(r);
	}
	return done;
}

// --preload: what the preload library's entries cost, and which of
// libuarch.so's wins they give away.
void preload_notes(const std::vector<Row> &done, std::vector<std::string> &notes)
{
	// What LIB's entries add to a call, in time: the median over the
	// fixed-size rows (for libuarch_record.so, what recording costs).
	std::vector<double> d;
	for (const Row &r : done)
		if (r.name.rfind("fixed", 0) == 0)
			d.push_back(r.ns[1] - r.ns[0]);
	if (!d.empty()) {
		double m = uarch::tools::median(d);
		char line[160];
		snprintf(line, sizeof line, "preload_ns - shared_ns: median %+.2f ns per call over %zu fixed-size rows",
			 m, d.size());
		notes.push_back(line);
	}
	// Where libuarch.so beats the C library, does the preload library
	// keep it (0.97x the C library or better)?
	size_t wins = 0, lost = 0;
	std::string which;
	for (const Row &r : done) {
		if (r.name.rfind("fixed", 0) != 0 || !(r.libc_shared() >= 1.0))
			continue;
		wins++;
		if (r.libc_preload() < 0.97)
			list_row(&which, &lost, r, r.libc_preload());
	}
	char line[160];
	snprintf(line, sizeof line, "fixed-size rows where libuarch.so is >= 1.00x the C library: %zu; "
		 "through the preload library below 0.97x it: %zu", wins, lost);
	notes.push_back(line + (lost ? " (" + which + (lost > 12 ? ", ...)" : ")") : std::string()));
}

// Writes the table, its geomeans and notes, and --plot; the exit status.
int report_rows(const MemArgs &m, const std::vector<Row> &done)
{
	const std::string &stat = m.stat;
	std::string title = "uarch-bench mem on " + cpu_name() + ", glibc " + gnu_get_libc_version() +
			    "; uarch: memcpy=" + uarch_impl("memcpy") + " memmove=" + uarch_impl("memmove") +
			    " memset=" + uarch_impl("memset") +
			    (m.preload.empty() ? "\nratio = C library time / uarch time (> 1: uarch faster), "
					       : "\nratio = time through libuarch.so / time through the preload entries (same variants), ") +
			    stat;
	report::Table t{"mem", title, {"op", "case", "align", std::string(side_names[0]) + "_ns",
				       std::string(side_names[1]) + "_ns", "ratio"}, {}, {}};
	if (g_sides == 3) {
		t.title += "; libc_shared and libc_preload = C library time / time through each";
		for (const char *c : {"libc_ns", "libc_shared", "libc_preload"})
			t.cols.push_back(c);
	}
	std::vector<std::pair<std::string, double>> ratios;
	for (const Row &r : done) {
		t.rows.push_back({r.op, r.name, r.align, {r.ns[0], 3}, {r.ns[1], 3}, {r.ratio(), 3}});
		if (g_sides == 3) {
			t.rows.back().push_back({r.ns[2], 3});
			t.rows.back().push_back({r.libc_shared(), 3});
			t.rows.back().push_back({r.libc_preload(), 3});
		}
		ratios.push_back({r.op, r.ratio()});
	}
	report::Table g = report::geomean("geometric mean ratio per op", ratios);
	double p90 = 0;
	if (std::string note = aa_noise(done, &p90); !note.empty())
		g.notes.push_back(note);
	g.notes.push_back(below_note(done, p90));
	if (!m.preload.empty())
		preload_notes(done, g.notes);
	bool ok = report::emit("uarch-bench mem", m.o,
			       {{"cpu", cpu_name()}, {"glibc", gnu_get_libc_version()}, {"memcpy", uarch_impl("memcpy")},
				{"memmove", uarch_impl("memmove")}, {"memset", uarch_impl("memset")}, {"statistic", stat}},
			       {t, g});
	std::string plot_why;
	if (!m.o.plot.empty() && !write_plot(m.o.plot, done, &plot_why)) {
		fprintf(stderr, "uarch-bench mem: %s: %s\n", m.o.plot.c_str(), plot_why.c_str());
		return 1;
	}
	return ok ? 0 : 1;
}

} // namespace

int bench_mem(int argc, char **argv)
{
	MemArgs m;
	if (!parse_mem_args(argc, argv, m))
		return 2;
	if (const char *p = getenv("LD_PRELOAD"))
		if (strstr(p, "uarch"))
			fprintf(stderr, "warning: LD_PRELOAD=%s: the \"libc\" side may be uarch too\n", p);
	if (m.trace_dump && m.trace.empty()) {
		fprintf(stderr, "uarch-bench mem: --trace-dump prints a --trace FILE's replay\n");
		return 2;
	}
	if (!m.trace.empty() && (!m.profiles.empty() || !m.preload.empty())) {
		fprintf(stderr, "uarch-bench mem: --trace replays alone (not with --profile or --preload)\n");
		return 2;
	}
	if (!m.trace.empty())   // in order, its own repetitions (trace_replay.cpp)
		return bench_mem_trace(m.trace, m.args, m.o, m.rounds, m.trace_dump);
	if (!m.profiles.empty())   // its own rounds (profile_replay.cpp), not the defaults below
		return bench_mem_profiles(m.profiles, m.args, m.o, m.rounds);
	Plan p;
	if (!plan_cases(m, p))
		return 2;
	if (int rc = run_cases(m); rc >= 0)
		return rc;
	return report_rows(m, collect_rows(p));
}
