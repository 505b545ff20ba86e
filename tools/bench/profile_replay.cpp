// uarch-bench mem --profile FILE...: each recorded op of each profile is
// replayed as a batch of calls whose sizes, destination and source
// alignments are drawn (seed 15, the same every run) from the profile's
// distributions: sizes from the exact counts up to 4096 and uniformly
// within a log2 bucket above (up to 64 MiB, the largest that uarch-bench
// mem's buffers hold); alignments independently
// from their recorded shares modulo 64. Each call starts on a cache line
// drawn from a 4 KiB window, plus its alignment; buffers are hot.
// memmove is replayed on disjoint buffers (the recorded overlap shares are
// in uarch-prof's report, not replayed).
// Sides: the C library, uarch (the bound variant), and every variant of
// the op that this CPU can run, called by name.
//
// One benchmark per op and profile, its sides timed in paired rounds
// (paired.h): --benchmark_repetitions=N rounds a side when given, else as
// many as fit about half a second a case (--quick: a fifth), and at least
// 5 a side: a replay whose batch copies gigabytes takes longer. (Each side as its own
// benchmark, repetitions in random order across all cases, let a row drift
// by up to 25% between runs on a 2-vCPU Zen 4 guest: gzip's memset replay,
// the same code on both sides, 0.78-1.23x in three runs.)
#include <benchmark/benchmark.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <dirent.h>
#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <random>
#include "bench.h"
#include "paired.h"
#include "dispatch/state.h"
#include "profile.h"
#include "profile_replay.h"
#include "select/plan.h"
#include "uarch.h"

namespace {

using namespace uarch::prof;
using CopyFn = void *(*)(void *, const void *, size_t);
using SetFn = void *(*)(void *, int, size_t);

// 64 Ki calls a batch (as the synthetic cases, for the same reason), fewer
// where that would copy more than 4 GiB: a profile whose bytes are in
// copies of tens of MiB would otherwise take seconds a batch.
constexpr size_t kMaxCalls = 1 << 16, kMinCalls = 1 << 12;
constexpr uint64_t kBatchBytes = uint64_t(4) << 30;
// The sizes: at most 64 MiB. An earlier cap of 8 MiB replayed a CPython
// pipeline's 16-64 MiB copies (97% of its bytes) as 8 MiB ones, right at
// uarch's non-temporal threshold on the Zen 4 guest, where a cached copy
// that fits the L3 wins: 0.90x glibc there, where copies of the sizes it
// recorded run 1.3-1.7x (large16384K, large65536K).
constexpr uint64_t kCap = uint64_t(64) << 20;

struct Replay {
	std::string name;          // profile name
	uint32_t op;
	std::vector<uint32_t> size;
	std::vector<uint32_t> doff, soff;
	char *dst = nullptr, *src = nullptr;
	paired::Result res;   // by run(), per side as in `sides`; empty until measured
};

size_t draw(std::mt19937_64 &rng, const uint64_t *w, size_t n, uint64_t total)
{
	uint64_t r = rng() % total;
	for (size_t i = 0; i < n; i++) {
		if (r < w[i])
			return i;
		r -= w[i];
	}
	return n - 1;
}

// Fills rp's sizes and offsets (no buffers); false when o has no calls.
bool draw_batch(Replay *rp, const OpCounts &o, uint64_t *maxn_out)
{
	uint64_t calls = 0, dtot = 0, stot = 0;
	for (uint32_t i = 0; i < size_slots; i++)
		calls += o.size[i];
	for (int i = 0; i < 64; i++)
		dtot += o.dst_align[i], stot += o.src_align[i];
	if (!calls)
		return false;
	// The batch's expected bytes, each bucket at its mean.
	double mean = 0;
	for (uint32_t i = 0; i < size_slots; i++)
		if (o.size[i]) {
			uint64_t lo = std::min(slot_lo(i), kCap), hi = std::min(slot_hi(i), kCap);
			mean += double(o.size[i]) * (double(lo) + double(hi)) / 2 / double(calls);
		}
	size_t n_calls = kMaxCalls;
	if (mean * double(kMaxCalls) > double(kBatchBytes))
		n_calls = std::max(kMinCalls, size_t(double(kBatchBytes) / mean));
	std::mt19937_64 rng(15);
	uint64_t maxn = 0;
	for (size_t k = 0; k < n_calls; k++) {
		uint32_t slot = uint32_t(draw(rng, o.size, size_slots, calls));
		uint64_t lo = slot_lo(slot), hi = std::min(slot_hi(slot), kCap);
		uint64_t n = lo >= hi ? std::min(lo, kCap) : lo + rng() % (hi - lo + 1);
		uint32_t line = uint32_t(rng() % 64) * 64;
		uint32_t da = dtot ? uint32_t(draw(rng, o.dst_align, 64, dtot)) : 0;
		uint32_t sa = stot ? uint32_t(draw(rng, o.src_align, 64, stot)) : 0;
		rp->size.push_back(uint32_t(n));
		rp->doff.push_back(line + da);
		rp->soff.push_back(line + sa);
		maxn = std::max(maxn, n);
	}
	*maxn_out = maxn;
	return true;
}

bool build(Replay *rp, const OpCounts &o)
{
	uint64_t maxn = 0;
	if (!draw_batch(rp, o, &maxn))
		return false;
	size_t len = (maxn + 8192 + 4095) / 4096 * 4096;
	// Two regions, src 1088 bytes past a page boundary from dst (as in the
	// other cases: no 4 KiB aliasing between a load and a recent store).
	size_t total = 2 * len + 4096 + 1088;
	void *m = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return false;
	rp->dst = static_cast<char *>(m);
	rp->src = rp->dst + len + 1088;
	memset(m, 1, total);
	return true;
}

struct Side {
	std::string name;
	void *fn;
};

// The paired rounds of one replay, its results kept in *rp.
void run(benchmark::State &st, Replay *rp, const std::vector<Side> *sides, int rounds, double budget_ns, bool use_min)
{
	const uint32_t *size = rp->size.data(), *doff = rp->doff.data(), *soff = rp->soff.data();
	const size_t calls = rp->size.size();
	char *d = rp->dst;
	const char *s = rp->src;
	auto batch = [&](size_t side) {
		void *fn = (*sides)[side].fn;
		if (rp->op == p_memset)
			paired::set_batch(reinterpret_cast<SetFn>(fn), d, size, doff, calls, 0);
		else
			paired::copy_batch(reinterpret_cast<CopyFn>(fn), d, s, size, doff, soff, calls);
	};
	for (auto _ : st)
		rp->res = paired::run(sides->size(), calls, batch, rounds, budget_ns, use_min);
	for (size_t j = 0; j < rp->res.ns.size(); j++)
		st.counters[(*sides)[j].name + "_ns"] = rp->res.ns[j];
	st.counters["rounds"] = double(rp->res.rounds);
}

} // namespace

bool profile_batch(const std::string &path, uint32_t op, std::vector<uint32_t> *size, std::vector<uint32_t> *doff,
		   std::vector<uint32_t> *soff, std::string *why)
{
	Profile p;
	if (!load(path, &p, why))
		return false;
	Replay r;
	uint64_t maxn = 0;
	if (op < p_op_count && draw_batch(&r, p.counts.op[op], &maxn)) {
		*size = std::move(r.size);
		*doff = std::move(r.doff);
		*soff = std::move(r.soff);
	}
	return true;
}

std::vector<std::string> committed_profiles()
{
	std::vector<std::string> out;
	for (const char *dir : {UARCH_PROFILES_SOURCE_DIR, UARCH_PROFILES_INSTALL_DIR}) {
		DIR *d = opendir(dir);
		if (!d)
			continue;
		while (dirent *e = readdir(d)) {
			std::string n = e->d_name;
			if (n.size() > 6 && n.compare(n.size() - 6, 6, ".uprof") == 0)
				out.push_back(std::string(dir) + "/" + n);
		}
		closedir(d);
		if (!out.empty())
			break;
	}
	std::sort(out.begin(), out.end());
	return out;
}

int bench_mem_profiles(const std::vector<std::string> &files, std::vector<char *> args, const report::Options &o,
		       int rounds)
{
	static std::deque<Replay> replays;
	std::map<uint32_t, std::vector<Side>> sides;
	std::vector<std::string> skipped;   // said once the files are read: a bad one is one line
	const uarch::Cpu &cpu = uarch::state().cpu;
	for (uint32_t op = 0; op < p_op_count; op++) {
		uarch::Op uop = uarch::Op(op);   // the recorder's ops are uarch's first three
		if (op == p_memset)
			sides[op] = {{"libc", reinterpret_cast<void *>(&::memset)}, {"uarch", reinterpret_cast<void *>(&uarch_memset)}};
		else if (op == p_memmove)
			sides[op] = {{"libc", reinterpret_cast<void *>(&::memmove)}, {"uarch", reinterpret_cast<void *>(&uarch_memmove)}};
		else
			sides[op] = {{"libc", reinterpret_cast<void *>(&::memcpy)}, {"uarch", reinterpret_cast<void *>(&uarch_memcpy)}};
		for (int i = int(uarch::Impl::generic); i < int(uarch::Impl::count); i++) {
			uarch::Impl impl = uarch::Impl(i);
			void *fn = uarch::impl_fn(uop, impl);
			if (!fn)
				continue;
			if (!uarch::impl_runs_on(uop, impl, cpu)) {
				skipped.push_back(std::string(uarch::op_name(op)) + " variant " + uarch::impl_name(impl));
				continue;
			}
			sides[op].push_back({uarch::impl_name(impl), fn});
		}
	}
	const double budget_ns = o.quick ? 1e8 : 5e8;
	std::vector<Replay *> order;
	for (const std::string &path : files) {
		Profile p;
		std::string why;
		if (!load(path, &p, &why)) {
			fprintf(stderr, "uarch-bench mem: %s: %s\n", path.c_str(), why.c_str());
			return 2;
		}
		std::string name = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
		if (name.size() > 6 && name.compare(name.size() - 6, 6, ".uprof") == 0)
			name.resize(name.size() - 6);
		for (uint32_t op = 0; op < p_op_count; op++) {
			replays.push_back(Replay{});
			Replay *rp = &replays.back();
			rp->name = name;
			rp->op = op;
			if (!build(rp, p.counts.op[op])) {
				replays.pop_back();
				continue;
			}
			order.push_back(rp);
			const std::vector<Side> *sd = &sides[op];
			bool use_min = o.min;
			benchmark::RegisterBenchmark((std::string("profile/") + name + "/" + op_name(op)).c_str(),
				[rp, sd, rounds, budget_ns, use_min](benchmark::State &st) {
					run(st, rp, sd, rounds, budget_ns, use_min);
				})
				->Iterations(1)
				->Repetitions(1);
		}
	}
	int argc = int(args.size());
	args.push_back(nullptr);
	benchmark::Initialize(&argc, args.data());
	if (benchmark::ReportUnrecognizedArguments(argc, args.data()))
		return 2;
	if (!o.plot.empty()) {
		fprintf(stderr, "uarch-bench mem: --plot: the replays (--profile) draw no plot\n");
		return 2;
	}
	if (!report::check_outputs("uarch-bench mem", o))
		return 2;
	report::Quiet rep;   // the tables are built from the rounds, not from Google Benchmark's times
	rep.show = o.rows;
	if (!benchmark::RunSpecifiedBenchmarks(&rep))   // Google Benchmark has said why, as in mem.cpp
		return 2;
	benchmark::Shutdown();
	for (const std::string &k : skipped)
		fprintf(stderr, "uarch-bench mem: %s skipped: this CPU cannot run it\n", k.c_str());

	std::string title = "uarch-bench mem --profile on " + cpu_name() + ", glibc " + gnu_get_libc_version() +
			    "; uarch: memcpy=" + uarch_impl("memcpy") + " memmove=" + uarch_impl("memmove") +
			    " memset=" + uarch_impl("memset") +
			    "\nratio = C library time / uarch time (> 1: uarch faster); replayed profiles, " +
			    paired::statistic(o.min);
	report::Table t{"profiles", title, {"op", "case", "align", "libc_ns", "uarch_ns", "ratio"}, {}, {}};
	report::Table v{"variants", "variants: C library time / variant time, per profile",
			{"op", "case", "variant", "variant_ns", "ratio"}, {}, {}};
	std::vector<std::pair<std::string, double>> ratios;
	for (const Replay *rp : order) {
		const paired::Result &r = rp->res;
		if (r.ratio.empty())   // filtered out
			continue;
		std::string op = op_name(rp->op);
		const std::vector<Side> &sd = sides[rp->op];
		t.rows.push_back({op, rp->name, "recorded", {r.ns[0], 3}, {r.ns[1], 3}, {r.ratio[1], 3}});
		ratios.push_back({op, r.ratio[1]});
		for (size_t k = 2; k < sd.size(); k++)
			v.rows.push_back({op, rp->name, sd[k].name, {r.ns[k], 3}, {r.ratio[k], 3}});
	}
	report::Table g = report::geomean("geometric mean ratio per op over the profiles", ratios);
	bool ok = report::emit("uarch-bench mem", o,
			       {{"cpu", cpu_name()}, {"glibc", gnu_get_libc_version()}, {"memcpy", uarch_impl("memcpy")},
				{"memmove", uarch_impl("memmove")}, {"memset", uarch_impl("memset")}, {"statistic", paired::statistic(o.min)}},
			       {t, g, v});
	return ok ? 0 : 1;
}
