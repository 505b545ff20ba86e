// uarch-bench mem --trace FILE: the recorded calls, in their order, on the
// C library's functions and on uarch's, in interleaved repetitions.
//
// Arena: where the calls land. The recorded addresses of each process are
// cut into regions: the union of every range a call wrote or read (size
// capped at 64 MiB), rounded out to 4 KiB pages, overlapping or touching
// ranges joined. A region gets an arena slot the first time a call touches
// it, at the arena's next unused address (page offsets kept, so alignment
// and 4 KiB aliasing are the program's), and keeps it: a program that
// copies into one buffer replays into one slot, and a call into addresses
// its process never touched before replays into arena addresses no call
// touched before. A region longer than 256 MiB is folded onto 256 MiB (its
// offsets modulo that). The arena holds the slots up to 1 GiB; past that
// the next slot starts again at the arena's start (a wrap), over the slots
// touched longest ago. Every process of a trace has its own regions, and
// the threads of a process are replayed in one thread, in the order of
// their calls' indices.
//
// Temperature: the arena is faulted in before timing (the program's page
// faults are not replayed), and before each timed pass a sweep over twice
// the L3 (common/cold_slots.h) leaves it out of the cache, so a region's
// first touch in a pass is cold, a reused one as warm as its reuse
// distance leaves it. Branch history: the sizes come in the program's
// order.
//
// Layout: each repetition maps a fresh arena, taken before the last one is
// released so that other physical pages back it. Which pages back the
// arena decides which lines meet in the physically indexed L2 and L3: with
// one arena a process, MariaDB's replayed calls (a 64 MiB table) took
// 472-555 ns a call with glibc 2.36's rep movsb from one process to the
// next, steady within each (Zen 4 guest, family 0x19 model 0x11), and one
// replay's prediction moved by up to 0.2. A program's runs each get their
// own pages too; the repetitions' median is over layouts, as the measured
// ratio is over runs.
//
// Gaps: ignored. The calls run back to back; the time between them (in the
// trace, and in uarch-prof report) is not spun, as a spin would reproduce
// neither the program's cache traffic nor its branch history between the
// calls, only add time that both sides share.
//
// Sides: the C library's memcpy, memmove and memset, and uarch_memcpy,
// uarch_memmove and uarch_memset (the bound variants); each name of the
// family replays as its op (mempcpy as memcpy, bzero as memset of 0). A
// repetition times one pass of each, in alternating order (glibc first in
// even repetitions), each pass the whole trace; ns per call is the median
// pass over the calls, the ratio the median of the repetitions' glibc /
// uarch, and the difference a call the median of their glibc - uarch.
//
// Prediction: the traced program ran with uarch (the recorder binds its
// variants), and its CPU time was recorded with the trace. Less what
// recording added (the calls times the cost each process timed at exit),
// that is the time with uarch; the time without adds the calls it made
// (recorded or dropped) times the difference per call:
//   end-to-end ratio = (with + calls x (glibc - uarch)) / with.
// With --trace-base, calls and CPU time are the traced run's less the
// base's (take_off).
#include "trace_replay.h"
#include <errno.h>
#include <gnu/libc-version.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <algorithm>
#include <map>
#include "bench.h"
#include "common/cold_slots.h"
#include "common/stats.h"
#include "profile.h"
#include "trace.h"
#include "uarch.h"

namespace {

using namespace uarch::prof;
using CopyFn = void *(*)(void *, const void *, size_t);
using SetFn = void *(*)(void *, int, size_t);

constexpr uint64_t kCap = uint64_t(64) << 20;      // the most bytes a call replays
constexpr uint64_t kFold = uint64_t(256) << 20;    // the most bytes of a region's offsets
constexpr uint64_t kArena = uint64_t(1) << 30;     // slots start below this
constexpr uint64_t kPage = 4096;

struct Call {
	uint64_t doff, soff;   // in the arena
	uint32_t size;
	uint8_t op;            // p_memcpy, p_memmove, p_memset
	uint8_t fill;
};

struct Region {
	uint64_t lo, hi;       // recorded, page-rounded
	int64_t slot = -1;     // arena offset, once touched
};

struct Model {
	std::vector<Call> calls;
	uint64_t arena_bytes = 0;   // what the slots use (at most kArena + one folded region)
	size_t slots = 0, dst_slots = 0, src_slots = 0, wraps = 0;
	size_t fresh_dst = 0;       // calls whose dst pages no call had touched before in the replay
	uint64_t traced_calls = 0;  // calls the processes made, recorded or not
	uint64_t records = 0, taken = 0;   // records read, and replayed (--trace-only)
	double cpu_ns = 0, overhead_ns = 0;
};

uint64_t page_lo(uint64_t a) { return a & ~(kPage - 1); }
uint64_t page_hi(uint64_t a) { return (a + kPage - 1) & ~(kPage - 1); }

// The regions of one process: the joined page-rounded ranges.
std::vector<Region> regions_of(const TraceSection &s)
{
	std::vector<std::pair<uint64_t, uint64_t>> r;
	for (const TraceRecord &c : s.rec) {
		uint64_t n = std::max<uint64_t>(std::min(c.size, kCap), 1);
		r.push_back({page_lo(c.dst), page_hi(c.dst + n)});
		if (entry_op(c.entry) != p_memset)
			r.push_back({page_lo(c.src), page_hi(c.src + n)});
	}
	std::sort(r.begin(), r.end());
	std::vector<Region> out;
	for (auto &[lo, hi] : r)
		if (!out.empty() && lo <= out.back().hi)
			out.back().hi = std::max(out.back().hi, hi);
		else
			out.push_back({lo, hi});
	return out;
}

// --trace-only: the calls of one op, of sizes lo..hi, replayed alone, and
// the prediction for them alone (the calls made scaled by the share of the
// records they are).
struct Only {
	int op = -1;           // -1: every call
	uint64_t lo = 0, hi = UINT64_MAX;
	bool takes(const TraceRecord &c) const
	{
		return op < 0 || (entry_op(c.entry) == uint32_t(op) && c.size >= lo && c.size <= hi);
	}
};

bool parse_only(const std::string &v, Only *o)
{
	std::string op = v.substr(0, v.find(':'));
	for (uint32_t k = 0; k < p_op_count; k++)
		if (op == op_name(k))
			o->op = int(k);
	if (o->op < 0)
		return false;
	if (op.size() == v.size())
		return true;
	unsigned long long lo, hi;
	int used = 0;
	return sscanf(v.c_str() + op.size(), ":%llu-%llu%n", &lo, &hi, &used) == 2 &&
	       size_t(used) == v.size() - op.size() && lo <= hi && (o->lo = lo, o->hi = hi, true);
}

Model build(const std::vector<TraceSection> &secs, const Only &only)
{
	Model m;
	uint64_t cursor = 0;
	std::vector<bool> used;   // arena pages touched so far, by any call
	for (const TraceSection &s : secs) {
		m.traced_calls += s.header.calls;
		m.cpu_ns += double(s.header.cpu_ns);
		m.overhead_ns += overhead_ns(s.header) * double(s.header.calls);
		std::vector<Region> reg = regions_of(s);
		std::vector<bool> as_dst(reg.size()), as_src(reg.size());
		// The arena offset of recorded address a (in a region), its slot
		// assigned at the region's first touch.
		auto place = [&](uint64_t a, bool dst) {
			size_t k = size_t(std::upper_bound(reg.begin(), reg.end(), a,
							    [](uint64_t x, const Region &r) { return x < r.lo; }) -
					  reg.begin()) - 1;
			Region &r = reg[k];
			uint64_t span = std::min(r.hi - r.lo, kFold) + (r.hi - r.lo > kFold ? kCap : 0);
			if (r.slot < 0) {
				if (cursor + span > kArena && cursor) {
					cursor = 0;
					m.wraps++;
				}
				r.slot = int64_t(cursor);
				cursor += span;
				m.arena_bytes = std::max(m.arena_bytes, cursor);
				m.slots++;
			}
			(dst ? as_dst : as_src)[k] = true;
			return uint64_t(r.slot) + (a - r.lo) % kFold;
		};
		size_t taken = 0;
		for (const TraceRecord &c : s.rec) {
			if (!only.takes(c))
				continue;
			taken++;
			Call x{};
			x.op = uint8_t(entry_op(c.entry));
			x.size = uint32_t(std::min(c.size, kCap));
			x.fill = (c.entry == e_bzero || c.entry == e_explicit_bzero || c.entry == e___explicit_bzero_chk) ? 0 : 1;
			x.doff = place(c.dst, true);
			x.soff = x.op == p_memset ? 0 : place(c.src, false);
			uint64_t n = std::max<uint32_t>(x.size, 1);
			if (used.size() < (m.arena_bytes + kPage) / kPage)
				used.resize((m.arena_bytes + kPage) / kPage);
			bool fresh = true;
			for (uint64_t p = x.doff / kPage; p <= (x.doff + n - 1) / kPage; p++)
				fresh = fresh && !used[p];
			m.fresh_dst += fresh;
			for (uint64_t p = x.doff / kPage; p <= (x.doff + n - 1) / kPage; p++)
				used[p] = true;
			if (x.op != p_memset)
				for (uint64_t p = x.soff / kPage; p <= (x.soff + n - 1) / kPage; p++)
					used[p] = true;
			m.calls.push_back(x);
		}
		m.records += s.rec.size();
		m.taken += taken;
		m.dst_slots += size_t(std::count(as_dst.begin(), as_dst.end(), true));
		m.src_slots += size_t(std::count(as_src.begin(), as_src.end(), true));
	}
	return m;
}

// --trace-base: what the same run did without the measured work (a server
// started and loaded, no client) comes off the traced run's calls and CPU
// time, so that the prediction is for the measured work alone. Where the
// trace kept its last calls (--trace-keep last), the replayed ones are that
// work's.
//
// Its calls come off the replay too: the processes of each trace in the
// order they started, the base's k-th before the run's k-th, whose records
// up to the base's count of calls go (a process the base lacks, such as a
// client's backend, keeps them all).
void trim(std::vector<TraceSection> *secs, std::vector<TraceSection> less)
{
	auto by_start = [](const TraceSection &a, const TraceSection &b) { return a.header.start_ns < b.header.start_ns; };
	std::stable_sort(secs->begin(), secs->end(), by_start);
	std::stable_sort(less.begin(), less.end(), by_start);
	for (size_t k = 0; k < secs->size() && k < less.size(); k++) {
		std::vector<TraceRecord> &r = (*secs)[k].rec;
		uint64_t done = less[k].header.calls;
		r.erase(r.begin(), std::find_if(r.begin(), r.end(), [&](const TraceRecord &x) { return x.seq > done; }));
	}
}

// The base's calls and CPU time off the run's (false: it made as many
// calls). The time may go to zero or below: a server's background work (a
// flush, a purge) can take more CPU in the base's instance than the
// measured run added in the other's (MariaDB 11.8 under Debian 13: 2.37
// against 1.82 s); the report then gives the program's time as unknown.
bool take_off(Model *m, const std::vector<TraceSection> &less)
{
	double cpu = 0, over = 0;
	uint64_t calls = 0;
	for (const TraceSection &s : less) {
		calls += s.header.calls;
		cpu += double(s.header.cpu_ns);
		over += overhead_ns(s.header) * double(s.header.calls);
	}
	if (calls >= m->traced_calls)
		return false;
	m->traced_calls -= calls;
	m->cpu_ns -= cpu;
	m->overhead_ns -= over;
	return true;
}

struct Side {
	CopyFn cpy, mov;
	SetFn set;
};

__attribute__((noinline)) void replay(const Call *c, size_t n, char *a, CopyFn cpy, CopyFn mov, SetFn set)
{
	for (size_t i = 0; i < n; i++) {
		char *d = a + c[i].doff;
		switch (c[i].op) {
		case p_memcpy:
			cpy(d, a + c[i].soff, c[i].size);
			break;
		case p_memmove:
			mov(d, a + c[i].soff, c[i].size);
			break;
		default:
			set(d, c[i].fill, c[i].size);
		}
	}
	__asm__ volatile("" : : : "memory");
}

// Writes every line of buf (twice the L3): what the arena held is out of
// the cache after it.
__attribute__((noinline)) void sweep(char *buf, size_t bytes, uint64_t round)
{
	for (size_t i = 0; i < bytes; i += 64)
		buf[i] = char(round + i);
	__asm__ volatile("" : : : "memory");
}

int bad(const std::string &msg)
{
	fprintf(stderr, "uarch-bench mem: %s\n", msg.c_str());
	return 2;
}

// --trace's own arguments (rest: argv[0] first); false with a message
// printed.
struct TraceArgs {
	std::string base;   // --trace-base FILE
	Only only;          // --trace-only OP[:LO-HI]
};

bool parse_args(const std::vector<char *> &rest, TraceArgs *t)
{
	for (size_t i = 1; i < rest.size(); i++) {
		std::string a = rest[i];
		if (a == "--trace-base" && i + 1 < rest.size())
			t->base = rest[++i];
		else if (a.rfind("--trace-base=", 0) == 0 && a.size() > 13)
			t->base = a.substr(13);
		else if ((a == "--trace-only" && i + 1 < rest.size()) || a.rfind("--trace-only=", 0) == 0) {
			std::string v = a == "--trace-only" ? rest[++i] : a.substr(13);
			if (!parse_only(v, &t->only))
				return bad("--trace-only '" + v +
					   "': want OP or OP:LO-HI (memcpy, memmove or memset; sizes in bytes)"), false;
		} else
			return bad("--trace: unknown argument '" + a +
				   "' (it takes --trace-base FILE, --trace-only OP[:LO-HI], --trace-dump, "
				   "--benchmark_repetitions=N and the common flags)"), false;
	}
	return true;
}

// The replay of file, less the base's calls and time where given; false
// with a message printed.
bool load_model(const std::string &file, const TraceArgs &t, Model *m, size_t *processes)
{
	std::vector<TraceSection> secs, less;
	std::string why;
	if (!load_trace(file, &secs, &why))
		return bad(file + ": " + why), false;
	if (!t.base.empty() && !load_trace(t.base, &less, &why))
		return bad(t.base + ": " + why), false;
	if (!t.base.empty())
		trim(&secs, less);
	*m = build(secs, t.only);
	*processes = secs.size();
	if (!t.base.empty() && !take_off(m, less))
		return bad("--trace-base " + t.base + ": it made as many calls as " + file +
			   " (the base is the same run without the measured work)"), false;
	if (m->records)   // --trace-only: the calls made, scaled to the share replayed
		m->traced_calls = uint64_t(double(m->traced_calls) * double(m->taken) / double(m->records));
	return true;
}

// ns a call of each side, the median of the passes; the ratio the median
// of the repetitions' glibc / uarch, q1 and q3 its quartiles (the spread
// over the repetitions' layouts); diff_ns the median of the repetitions'
// glibc - uarch (each pair on one layout, which the sides' own medians
// are not), diff_lo and diff_hi its 95% interval.
struct Timing {
	double libc_ns, uarch_ns, ratio, q1, q3, diff_ns, diff_lo, diff_hi;
	size_t reps;
};

// len bytes mapped and faulted in; nullptr with a message printed.
char *map_faulted(size_t len)
{
	void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return bad(std::string("--trace: cannot map the arena: ") + strerror(errno)), nullptr;
	memset(p, 1, len);
	return static_cast<char *>(p);
}

// Times the replay, the sides interleaved; false with a message printed.
bool time_sides(const Model &m, const report::Options &o, int rounds, Timing *out)
{
	size_t arena_len = size_t(m.arena_bytes + kPage);
	size_t sweep_len = uarch::tools::cold_pool_bytes();
	char *sw = map_faulted(sweep_len);
	if (!sw)
		return false;
	double t_map = uarch::tools::thread_ns();
	char *arena = map_faulted(arena_len);
	t_map = uarch::tools::thread_ns() - t_map;
	if (!arena)
		return false;

	const Side sides[2] = {{&::memcpy, &::memmove, &::memset}, {&uarch_memcpy, &uarch_memmove, &uarch_memset}};
	auto pass = [&](int side, uint64_t round) {
		sweep(sw, sweep_len, round);
		double t0 = uarch::tools::thread_ns();
		replay(m.calls.data(), m.calls.size(), arena, sides[side].cpy, sides[side].mov, sides[side].set);
		return uarch::tools::thread_ns() - t0;
	};
	pass(0, 0);   // warm-up: code, page tables
	pass(1, 0);
	double one = std::max(pass(0, 1) + pass(1, 1), 1.0);
	// At least 11 layouts where the budget would take fewer.
	size_t reps = rounds > 0 ? size_t(rounds)
				 : size_t(std::clamp((o.quick ? 4e8 : 2e9) / (one + t_map + 2e7), o.quick ? 5.0 : 11.0, 201.0));
	// Then more, up to 30 s in all, while the prediction's 95% interval
	// is wider than 0.015 (the saving's interval over the program's time,
	// or over the calls' where that is unknown): the layouts differ. One
	// MariaDB trace predicted 1.014-1.066 from 11 layouts in ten processes,
	// 1.034-1.045 from 91-94 in three (Zen 4 guest, glibc 2.36;
	// policy-evidence.md#zen4).
	double over = m.cpu_ns - m.overhead_ns > 0 ? (m.cpu_ns - m.overhead_ns) / double(m.traced_calls) : 0;
	double spent = 0;
	std::vector<double> t[2], q, d;
	auto precise = [&] {
		auto [lo, hi] = uarch::tools::median_interval(d);
		return (hi - lo) / (over > 0 ? over : uarch::tools::median(t[1])) <= 0.015;
	};
	for (size_t r = 0; r < reps || (rounds <= 0 && !o.quick && r < 1001 && spent < 3e10 && !precise()); r++) {
		double t0 = uarch::tools::thread_ns();
		char *next = map_faulted(arena_len);
		munmap(arena, arena_len);
		if (!(arena = next))
			return false;
		double x[2];
		for (int k = 0; k < 2; k++) {
			int side = (r & 1) ? 1 - k : k;
			x[side] = pass(side, r + 2) / double(m.calls.size());
		}
		t[0].push_back(x[0]);
		t[1].push_back(x[1]);
		q.push_back(x[0] / x[1]);
		d.push_back(x[0] - x[1]);
		spent += uarch::tools::thread_ns() - t0;
	}
	using uarch::tools::quantile;
	auto [lo, hi] = uarch::tools::median_interval(d);
	*out = {quantile(t[0], 0.5), quantile(t[1], 0.5), quantile(q, 0.5), quantile(q, 0.25), quantile(q, 0.75),
		quantile(d, 0.5), lo, hi, d.size()};
	munmap(arena, arena_len);
	munmap(sw, sweep_len);
	return true;
}

// The table: the replay's row with the prediction; 0, or 1 where an
// output could not be written.
int report_replay(const std::string &file, const Model &m, const std::string &stats, const Timing &tm,
		  const report::Options &o)
{
	double with = m.cpu_ns - m.overhead_ns, calls = double(m.traced_calls), saving = calls * tm.diff_ns;
	std::string name = file.substr(file.rfind('/') == std::string::npos ? 0 : file.rfind('/') + 1);
	report::Table tab{"trace",
			  "uarch-bench mem --trace on " + cpu_name() + ", glibc " + gnu_get_libc_version() +
				  "; uarch: memcpy=" + uarch_impl("memcpy") + " memmove=" + uarch_impl("memmove") +
				  " memset=" + uarch_impl("memset") + "\nthe recorded calls in order, ns a call: median of " +
				  std::to_string(tm.reps) + " passes a side, each pair on a fresh arena; ratio = C library time / uarch "
				  "time (> 1: uarch faster), ratio_q1 and ratio_q3 its quartiles over the arenas",
			  {"case", "calls", "libc_ns", "uarch_ns", "ratio", "ratio_q1", "ratio_q3", "program_ms", "saving_ms",
			   "end_to_end", "end_to_end_lo", "end_to_end_hi"},
			  {},
			  {"replayed: " + stats,
			   "program_ms: the traced processes' CPU time less what recording added (and less the "
			   "base's; n/a where the base took as much); saving_ms: the " +
				   std::to_string(m.traced_calls) + " calls they made x the median of the passes' libc - uarch ns a call",
			   "end_to_end: predicted (program time without uarch) / (time with), from the saving alone; "
			   "gaps between calls not replayed; the C library's internal copies are not in the trace; "
			   "end_to_end_lo and end_to_end_hi: its 95% interval (the order statistics of the passes' differences)"}};
	auto known = [&](double v, int digits) { return with > 0 ? report::Cell(v, digits) : report::Cell("n/a"); };
	tab.rows.push_back({name, {double(m.calls.size()), 0}, {tm.libc_ns, 3}, {tm.uarch_ns, 3}, {tm.ratio, 3},
			    {tm.q1, 3}, {tm.q3, 3}, known(with / 1e6, 3), {saving / 1e6, 3}, known((with + saving) / with, 4),
			    known((with + calls * tm.diff_lo) / with, 4), known((with + calls * tm.diff_hi) / with, 4)});
	bool ok = report::emit("uarch-bench mem", o,
			       {{"cpu", cpu_name()}, {"glibc", gnu_get_libc_version()}, {"memcpy", uarch_impl("memcpy")},
				{"memmove", uarch_impl("memmove")}, {"memset", uarch_impl("memset")}},
			       {tab});
	return ok ? 0 : 1;
}

} // namespace

int bench_mem_trace(const std::string &file, const std::vector<char *> &rest, const report::Options &o, int rounds,
		    bool dump)
{
	TraceArgs t;
	if (!parse_args(rest, &t))
		return 2;
	if (!o.plot.empty())
		return bad("--plot: the trace replay draws no plot");
	Model m;
	size_t processes = 0;
	if (!load_model(file, t, &m, &processes))
		return 2;
	std::string stats = std::to_string(m.calls.size()) + " calls, " + std::to_string(processes) +
			    " process(es); arena: " + std::to_string(m.slots) + " slots (dst " + std::to_string(m.dst_slots) +
			    ", src " + std::to_string(m.src_slots) + "), " + std::to_string(m.arena_bytes >> 10) +
			    " KiB, wraps " + std::to_string(m.wraps) + "; calls into fresh dst addresses " +
			    std::to_string(m.fresh_dst);
	if (dump) {
		printf("# replay of %s: %s\n# op size dst_offset src_offset\n", file.c_str(), stats.c_str());
		for (const Call &c : m.calls)
			printf("%s %u %" PRIu64 " %" PRIu64 "\n", op_name(c.op), c.size, c.doff, c.soff);
		return 0;
	}
	if (m.calls.empty())
		return bad(file + (t.only.op < 0 ? ": no calls recorded" : ": no calls of that op and size recorded"));
	if (!report::check_outputs("uarch-bench mem", o))
		return 2;
	Timing tm;
	if (!time_sides(m, o, rounds, &tm))
		return 2;
	return report_replay(file, m, stats, tm, o);
}
