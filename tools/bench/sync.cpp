// uarch-bench sync: barriers and prefetch against their usual forms, in one
// process, with ratios.
//
// Barriers. Every case runs the same loop body, which is what code around a
// full barrier does: store to one shared variable, barrier, load another
// (the store-buffering pattern of Dekker, seqlock writers, ring doorbells),
// then call a function and return. Cases:
//   none                  no barrier: the loop's own cost
//   uarch_smp_mb          the inline form: lock addl $0,-132(%rsp)
//   uarch_smp_mb (call)   the exported function, through a pointer (dlsym)
//   mfence
//   atomic_thread_fence   std::atomic_thread_fence(seq_cst), as compiled here
//                         (gcc 12: lock orq $0,(%rsp); clang 14: mfence)
//   call+lock (%rsp)      a called function doing lock orq $0,(%rsp); ret: the
//                         locked op hits the return address the call just
//                         stored and the ret loads next (seed 003's reason
//                         for going below the stack pointer)
//   call+lock -128(%rsp)  the same with the exported function's slot
//   call+lock -132(%rsp)  the same with the inline form's slot
// Each case runs at 64 stack depths (see barrier_at_depth). The table gives
// ns per iteration (CPU time), the barrier's share (minus "none") and the
// ratio of mfence's time to each.
//
// Prefetch. Batched lookups of random 256-byte records in a table far larger
// than the last-level cache (default 512 MiB): each lookup hashes all 32
// words of its record in one dependent chain, so out-of-order execution
// cannot reach far ahead; while batch k is hashed, batch k+1's records are
// prefetched. Cases: no prefetch; __builtin_prefetch per line; inline
// uarch_prefetch per line; uarch_prefetch_range (exported, the bound
// stride); the prefetcht0 variant at strides 64/128/256 (every line, every
// 2nd, every 4th: how far the hardware's adjacent-line prefetch carries).
// Record indices come from a counter hash, so every case sees the same
// sequence and no index array competes for the cache.
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <atomic>
#include <cmath>
#include <map>
#include <string>
#include <vector>
#include "bench.h"
#include "report.h"
#include "uarch.h"
#if defined(__x86_64__)
#include "arch/x86_64/sync.h"
#endif

namespace {

// ---- barriers ---------------------------------------------------------------

struct alignas(64) Shared {
	volatile uint64_t v;
};
Shared g_store, g_load;

// The function every iteration calls: it saves and restores a register on
// the stack, as most non-leaf code does.
__attribute__((noinline)) uint64_t callee(uint64_t x)
{
	__asm__ __volatile__("" : "+r"(x) : : "rbx");
	return x * 3 + 1;
}

void (*volatile g_exported_mb)(void);

#if defined(__x86_64__)
// Called barriers written in assembly, so the compiler adds nothing.
extern "C" void bench_call_lock_rsp0(void);
extern "C" void bench_call_lock_rsp128(void);
extern "C" void bench_call_lock_rsp132(void);
__asm__(".text\n"
	".p2align 4\n"
	".globl bench_call_lock_rsp0\n"
	".hidden bench_call_lock_rsp0\n"
	".type bench_call_lock_rsp0, @function\n"
	"bench_call_lock_rsp0:\n"
	"\tlock orq $0,(%rsp)\n"
	"\tret\n"
	".size bench_call_lock_rsp0, .-bench_call_lock_rsp0\n"
	".p2align 4\n"
	".globl bench_call_lock_rsp128\n"
	".hidden bench_call_lock_rsp128\n"
	".type bench_call_lock_rsp128, @function\n"
	"bench_call_lock_rsp128:\n"
	"\tlock addl $0,-128(%rsp)\n"
	"\tret\n"
	".size bench_call_lock_rsp128, .-bench_call_lock_rsp128\n"
	".p2align 4\n"
	".globl bench_call_lock_rsp132\n"
	".hidden bench_call_lock_rsp132\n"
	".type bench_call_lock_rsp132, @function\n"
	"bench_call_lock_rsp132:\n"
	"\tlock addl $0,-132(%rsp)\n"
	"\tret\n"
	".size bench_call_lock_rsp132, .-bench_call_lock_rsp132\n");
#endif

enum class Mb { none, uarch_inline, uarch_call, mfence, thread_fence, call_rsp0, call_rsp128, call_rsp132 };

template <Mb kind>
inline void barrier()
{
	if constexpr (kind == Mb::uarch_inline)
		uarch_smp_mb();
	else if constexpr (kind == Mb::uarch_call)
		g_exported_mb();
	else if constexpr (kind == Mb::thread_fence)
		std::atomic_thread_fence(std::memory_order_seq_cst);
#if defined(__x86_64__)
	else if constexpr (kind == Mb::mfence)
		__asm__ __volatile__("mfence" ::: "memory");
	else if constexpr (kind == Mb::call_rsp0)
		bench_call_lock_rsp0();
	else if constexpr (kind == Mb::call_rsp128)
		bench_call_lock_rsp128();
	else if constexpr (kind == Mb::call_rsp132)
		bench_call_lock_rsp132();
#endif
	else
		__asm__ __volatile__("" ::: "memory");
}

constexpr int kUnroll = 64;
constexpr int kDepths = 64;   // stack depths, 64 bytes apart: one page

template <Mb kind>
__attribute__((noinline)) uint64_t barrier_loop(uint64_t x)
{
	for (int i = 0; i < kUnroll; i++) {
		g_store.v = x;
		barrier<kind>();
		x += g_load.v;
		x = callee(x);
	}
	return x;
}

// Runs the loop with the stack pointer moved down by depth bytes. Zen 3
// shows 4 KiB aliasing between the barrier's stack slot and the shared
// variables: at unlucky stack addresses (the slot's low 12 bits near a
// shared variable's) a loop runs up to 5x slower, for (%rsp) and
// -132(%rsp) alike, only at different depths. A single depth would
// compare luck; every case instead cycles through a page of depths.
template <Mb kind>
__attribute__((noinline)) uint64_t barrier_at_depth(uint64_t x, size_t depth)
{
	volatile char *pad = static_cast<volatile char *>(__builtin_alloca(depth + 16));
	pad[0] = 0;
	return barrier_loop<kind>(x) + pad[0];
}

template <Mb kind>
void bm_barrier(benchmark::State &st)
{
	uint64_t x = 1;
	size_t d = 0;
	for (auto _ : st) {
		x = barrier_at_depth<kind>(x, d * 64);
		d = (d + 1) % kDepths;
	}
	benchmark::DoNotOptimize(x);
	st.counters["per"] = kUnroll;
}

// ---- prefetch ----------------------------------------------------------------

constexpr size_t kRecord = 256;
constexpr size_t kWords = kRecord / 8;
constexpr int kBatch = 16;
constexpr int kLookups = 1024;   // per benchmark iteration

struct Table {
	uint64_t *base = nullptr;
	size_t bytes = 0, records = 0;
	bool huge = false;
};
Table g_table;

inline uint64_t mix(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

inline const uint64_t *record(uint64_t n)
{
	uint64_t i = uint64_t((unsigned __int128)mix(n) * g_table.records >> 64);
	return g_table.base + i * kWords;
}

enum class Pf { none, builtin, uarch_inline, range_exported, range_stride };

void (*volatile g_range_fn)(const void *, size_t);

template <Pf kind>
inline void prefetch_record(const uint64_t *r)
{
	if constexpr (kind == Pf::builtin) {
		for (size_t l = 0; l < kRecord; l += 64)
			__builtin_prefetch(reinterpret_cast<const char *>(r) + l);
	} else if constexpr (kind == Pf::uarch_inline) {
		for (size_t l = 0; l < kRecord; l += 64)
			uarch_prefetch(reinterpret_cast<const char *>(r) + l);
	} else if constexpr (kind == Pf::range_exported || kind == Pf::range_stride) {
		g_range_fn(r, kRecord);
	}
}

// One dependent chain through all words of the record.
inline uint64_t hash_record(const uint64_t *r, uint64_t h)
{
	for (size_t k = 0; k < kWords; k++)
		h = (h ^ r[k]) * 0x9e3779b97f4a7c15ull;
	return h;
}

template <Pf kind>
void bm_lookup(benchmark::State &st, uint32_t stride)
{
#if defined(__x86_64__)
	if (kind == Pf::range_stride) {
		uarch::set_prefetch_stride(stride);
		g_range_fn = uarch_x86_64_prefetch_range_t0;
	}
#else
	if (kind == Pf::range_stride) {
		st.SkipWithError("strides: x86-64 only");
		return;
	}
#endif
	if (kind == Pf::range_exported)
		g_range_fn = uarch_prefetch_range;
	static uint64_t cursor = 0;   // per case: always fresh records
	uint64_t n = cursor, h = 0;
	for (auto _ : st) {
		const uint64_t *next[kBatch], *cur[kBatch];
		for (int j = 0; j < kBatch; j++)
			cur[j] = record(n + j);
		for (int b = 0; b < kLookups; b += kBatch) {
			n += kBatch;
			for (int j = 0; j < kBatch; j++) {
				next[j] = record(n + j);
				prefetch_record<kind>(next[j]);
			}
			for (int j = 0; j < kBatch; j++)
				h = hash_record(cur[j], h);
			for (int j = 0; j < kBatch; j++)
				cur[j] = next[j];
		}
	}
	cursor = n;
	benchmark::DoNotOptimize(h);
	st.counters["per"] = kLookups;
}

bool map_table(size_t mib, bool thp)
{
	g_table.bytes = mib << 20;
	void *m = mmap(nullptr, g_table.bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return false;
	g_table.huge = madvise(m, g_table.bytes, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) == 0 && thp;
	g_table.base = static_cast<uint64_t *>(m);
	g_table.records = g_table.bytes / kRecord;
	for (size_t i = 0; i < g_table.bytes / 8; i++)
		g_table.base[i] = mix(i);
	return true;
}

// kB of this process's anonymous memory in huge pages.
long anon_huge_kb()
{
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	if (!f)
		return -1;
	char line[256];
	long kb = -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

// ---- results -----------------------------------------------------------------

struct Case {
	const char *key;    // benchmark name
	const char *label;  // table label
};

const Case barrier_cases[] = {
	{"barrier/none", "none (loop only)"},
	{"barrier/uarch_smp_mb", "uarch_smp_mb (inline)"},
	{"barrier/uarch_smp_mb_exported", "uarch_smp_mb (exported, call)"},
	{"barrier/mfence", "mfence"},
	{"barrier/atomic_thread_fence", "std::atomic_thread_fence"},
	{"barrier/call_lock_rsp0", "call; lock orq $0,(%rsp); ret"},
	{"barrier/call_lock_rsp128", "call; lock addl $0,-128(%rsp); ret"},
	{"barrier/call_lock_rsp132", "call; lock addl $0,-132(%rsp); ret"},
};

const Case prefetch_cases[] = {
	{"prefetch/none", "no prefetch"},
	{"prefetch/builtin_prefetch", "__builtin_prefetch per line"},
	{"prefetch/uarch_prefetch", "uarch_prefetch per line (inline)"},
	{"prefetch/uarch_prefetch_range", "uarch_prefetch_range (exported)"},
	{"prefetch/range_stride64", "prefetch_range stride 64 (every line)"},
	{"prefetch/range_stride128", "prefetch_range stride 128 (every 2nd)"},
	{"prefetch/range_stride256", "prefetch_range stride 256 (every 4th)"},
};

// What the command line asked for.
struct SyncArgs {
	report::Options o;
	std::string stat;   // "min" or "median": which repetition the tables use
	bool thp = true;
	size_t table_mib = 0;
	std::vector<char *> args;   // for Google Benchmark, our defaults added
};

// Fills a from the command line; -1 to go on, else the exit status.
int parse_sync(int argc, char **argv, SyncArgs &a)
{
	a.o = report::parse(argc, argv);
	a.stat = a.o.min ? "min" : "median";
	bool quick = a.o.quick, has_min_time = false, has_reps = false, has_interleave = false;
	a.args = {argv[0]};
	for (size_t i = 1; i < a.o.rest.size(); i++) {
		std::string arg = a.o.rest[i];
		if (arg == "--no-thp") {
			a.thp = false;
		} else if (arg.rfind("--table-mib=", 0) == 0) {
			a.table_mib = strtoull(arg.c_str() + 12, nullptr, 10);
		} else if (arg == "-h" || arg == "--help") {
			printf("usage: %s [--quick] [--min] [--rows] [--csv FILE] [--json FILE] [--table-mib=N] [--no-thp]\n"
			       "       [google benchmark flags]\n"
			       "  --quick        short runs, 256 MiB table\n"
			       "  --min          the table uses the fastest repetition, not the median\n"
			       "  --table-mib=N  size of the lookup table (default 512)\n"
			       "  --no-thp       4 KiB pages for the table (default: asks for huge pages)\n",
			       argv[0]);
			return 0;
		} else {
			has_min_time |= arg.rfind("--benchmark_min_time", 0) == 0;
			has_reps |= arg.rfind("--benchmark_repetitions", 0) == 0;
			has_interleave |= arg.rfind("--benchmark_enable_random_interleaving", 0) == 0;
			a.args.push_back(a.o.rest[i]);
		}
	}
	if (!a.table_mib)
		a.table_mib = quick ? 256 : 512;
	// Defaults for a shared, noisy machine: several repetitions in random
	// order (drift and other load hit every case alike), medians in the
	// table. Any of these given on the command line wins.
	static std::string min_time, reps, interleave = "--benchmark_enable_random_interleaving=true",
					     aggregates = "--benchmark_display_aggregates_only=true";
	if (!has_min_time) {
		min_time = quick ? "--benchmark_min_time=0.03" : "--benchmark_min_time=0.2";
		a.args.push_back(min_time.data());
	}
	if (!has_reps) {
		reps = quick ? "--benchmark_repetitions=3" : "--benchmark_repetitions=7";
		a.args.push_back(reps.data());
		a.args.push_back(aggregates.data());
	}
	if (!has_interleave)
		a.args.push_back(interleave.data());
	return -1;
}

// Finds the exported barrier, fills the lookup table and registers every
// case; -1 to go on, else the exit status. A bad Google Benchmark flag is
// reported before --plot or an unwritable output.
int prepare_sync(SyncArgs &a)
{
	g_exported_mb = reinterpret_cast<void (*)(void)>(dlsym(RTLD_DEFAULT, "uarch_smp_mb"));
	if (!g_exported_mb) {
		fprintf(stderr, "uarch-bench sync: uarch_smp_mb not found: %s\n", dlerror());
		return 1;
	}
	if (!map_table(a.table_mib, a.thp)) {
		perror("uarch-bench sync: mmap");
		return 1;
	}

	using benchmark::RegisterBenchmark;
	RegisterBenchmark("barrier/none", bm_barrier<Mb::none>);
	RegisterBenchmark("barrier/uarch_smp_mb", bm_barrier<Mb::uarch_inline>);
	RegisterBenchmark("barrier/uarch_smp_mb_exported", bm_barrier<Mb::uarch_call>);
	RegisterBenchmark("barrier/atomic_thread_fence", bm_barrier<Mb::thread_fence>);
#if defined(__x86_64__)
	RegisterBenchmark("barrier/mfence", bm_barrier<Mb::mfence>);
	RegisterBenchmark("barrier/call_lock_rsp0", bm_barrier<Mb::call_rsp0>);
	RegisterBenchmark("barrier/call_lock_rsp128", bm_barrier<Mb::call_rsp128>);
	RegisterBenchmark("barrier/call_lock_rsp132", bm_barrier<Mb::call_rsp132>);
#endif
	RegisterBenchmark("prefetch/none", bm_lookup<Pf::none>, 0);
	RegisterBenchmark("prefetch/builtin_prefetch", bm_lookup<Pf::builtin>, 0);
	RegisterBenchmark("prefetch/uarch_prefetch", bm_lookup<Pf::uarch_inline>, 0);
	RegisterBenchmark("prefetch/uarch_prefetch_range", bm_lookup<Pf::range_exported>, 0);
#if defined(__x86_64__)
	RegisterBenchmark("prefetch/range_stride64", bm_lookup<Pf::range_stride>, 64);
	RegisterBenchmark("prefetch/range_stride128", bm_lookup<Pf::range_stride>, 128);
	RegisterBenchmark("prefetch/range_stride256", bm_lookup<Pf::range_stride>, 256);
#endif

	int bargc = int(a.args.size());
	a.args.push_back(nullptr);
	benchmark::Initialize(&bargc, a.args.data());
	if (benchmark::ReportUnrecognizedArguments(bargc, a.args.data()))
		return 2;
	if (!a.o.plot.empty()) {
		fprintf(stderr, "uarch-bench sync: --plot: only uarch-bench mem draws a plot\n");
		return 2;
	}
	if (!report::check_outputs("uarch-bench sync", a.o))
		return 2;
	return -1;
}

// The barrier table: each case's time, less the bare loop's, against mfence.
report::Table barrier_table(const report::Medians &rep, const std::string &stat)
{
	std::string head = "uarch-bench sync on " + cpu_name() + "; compiler " + __VERSION__ + "; uarch: smp_mb=" +
			   uarch_impl("smp_mb") + " prefetch_range=" + uarch_impl("prefetch_range") +
			   " prefetchw=" + uarch_impl("prefetchw") + "\nCPU time per iteration (" +
			   (stat == "min" ? "fastest repetition" : "median of the repetitions") +
			   "); vs_mfence = mfence's time / this time (> 1: faster than mfence)";
	double none = rep.get("barrier/none"), mf = rep.get("barrier/mfence");
	double tf = rep.get("barrier/atomic_thread_fence");
	report::Table bt{"barrier", head, {"barrier, in store/barrier/load/call loop", "ns_per_iter", "barrier_ns",
					    "vs_mfence", "vs_thread_fence"}, {}, {}};
	for (const Case &c : barrier_cases) {
		double t = rep.get(c.key);
		if (!std::isnan(t))
			bt.rows.push_back({c.label, {t, 2}, {t - none, 2}, {mf / t, 2}, {tf / t, 2}});
	}
	return bt;
}

// The prefetch table: each case against no prefetch, and the best stride.
report::Table prefetch_table(const report::Medians &rep, size_t table_mib)
{
	double base = rep.get("prefetch/none");
	char title[256];
	snprintf(title, sizeof title,
		 "%zu MiB table (%s), %zu-byte records, batches of %d, ns per lookup; speedup = no-prefetch time / this time",
		 table_mib, anon_huge_kb() > 0 ? "transparent huge pages" : "4 KiB pages", kRecord, kBatch);
	report::Table pt{"prefetch", title, {"prefetch", "ns_per_lookup", "speedup"}, {}, {}};
	const Case *best = nullptr;
	double best_t = INFINITY;
	for (const Case &c : prefetch_cases) {
		double t = rep.get(c.key);
		if (std::isnan(t))
			continue;
		pt.rows.push_back({c.label, {t, 2}, {base / t, 2}});
		if (!strncmp(c.key, "prefetch/range_stride", 21) && t < best_t)
			best = &c, best_t = t;
	}
	if (best)
		pt.notes.push_back(std::string("fastest stride here: ") + best->label);
	return pt;
}

} // namespace

int bench_sync(int argc, char **argv)
{
	SyncArgs a;
	if (int rc = parse_sync(argc, argv, a); rc >= 0)
		return rc;
	if (int rc = prepare_sync(a); rc >= 0)
		return rc;
	report::Medians rep;
	rep.stat = a.stat;
	rep.show = a.o.rows;
	if (!benchmark::RunSpecifiedBenchmarks(&rep))   // Google Benchmark has said why, as in mem.cpp
		return 2;
	benchmark::Shutdown();
	report::Table bt = barrier_table(rep, a.stat), pt = prefetch_table(rep, a.table_mib);
	bool ok = report::emit("uarch-bench sync", a.o,
			       {{"cpu", cpu_name()}, {"compiler", __VERSION__}, {"smp_mb", uarch_impl("smp_mb")},
				{"prefetch_range", uarch_impl("prefetch_range")}, {"prefetchw", uarch_impl("prefetchw")},
				{"statistic", a.stat}},
			       {bt, pt});
	return ok ? 0 : 1;
}
