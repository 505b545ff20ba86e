// uarch-prof report of a trace. Reuse, temperature and patterns are
// computed here from the recorded order, never inside the recorder:
//   reuse distance: for each call, the distinct 4 KiB pages that the traced
//     calls touched (dst and src, at most 64 MiB a call) since the call's
//     first dst page was last touched; "first touch": never before in its
//     process. The program's own loads and stores between the calls are not
//     in the trace, so a distance is a lower bound and the temperature it
//     suggests an upper one.
//   sizes: per thread, the share of calls whose size equals the previous
//     call's, and the share whose size is among the previous 16.
//   gaps: the ticks between a thread's calls, in ns.
#include <inttypes.h>
#include <stdio.h>
#include <algorithm>
#include <map>
#include <unordered_map>
#include "profile.h"
#include "trace.h"

namespace uarch::prof {

double overhead_ns(const TraceHeader &h) { return double(h.overhead_ticks_x16) / 16 * 1e9 / double(h.tick_hz); }

namespace {

double pct(double a, double b) { return b > 0 ? 100.0 * a / b : 0.0; }

// LRU stack distance over pages, by call: a Fenwick tree over the calls
// counts the pages whose latest touch was that call.
struct Distances {
	std::vector<uint32_t> tree;
	std::unordered_map<uint64_t, uint32_t> last;   // page -> 1 + call of its latest touch
	explicit Distances(size_t calls) : tree(calls + 2, 0) {}
	void add(size_t i, int v)
	{
		for (i++; i < tree.size(); i += i & -i)
			tree[i] += uint32_t(v);
	}
	uint64_t prefix(size_t i) const   // calls 0..i-1
	{
		uint64_t s = 0;
		for (; i > 0; i -= i & -i)
			s += tree[i];
		return s;
	}
	// Pages touched after the page's latest touch, before call `now`;
	// UINT64_MAX: never touched.
	uint64_t distance(uint64_t page, size_t now) const
	{
		auto it = last.find(page);
		return it == last.end() ? UINT64_MAX : prefix(now) - prefix(it->second);
	}
	void touch(uint64_t addr, uint64_t n, size_t now)
	{
		uint64_t p0 = addr >> 12, p1 = (addr + std::max<uint64_t>(n, 1) - 1) >> 12;
		p1 = std::min(p1, p0 + (uint64_t(64) << 20 >> 12) - 1);
		for (uint64_t p = p0; p <= p1; p++) {
			auto [it, fresh] = last.try_emplace(p, uint32_t(now + 1));
			if (!fresh) {
				add(it->second - 1, -1);
				it->second = uint32_t(now + 1);
			}
			add(now, 1);
		}
	}
};

} // namespace

void report_trace(const std::vector<TraceSection> &secs, size_t nfiles)
{
	uint64_t calls = 0, records = 0, cpu_ns = 0, threads = 0;
	double overhead = 0;
	for (const TraceSection &s : secs) {
		calls += s.header.calls;
		records += s.rec.size();
		cpu_ns += s.header.cpu_ns;
		overhead += overhead_ns(s.header) * double(s.header.calls);
		std::map<uint32_t, int> tids;
		for (const TraceRecord &r : s.rec)
			tids[r.tid] = 1;
		threads += tids.size();
	}
	const TraceHeader &h0 = secs[0].header;
	printf("trace: %zu file(s), %zu process(es), %" PRIu64 " thread(s) in the records; keep %s, budget %" PRIu64
	       " a process\n",
	       nfiles, secs.size(), threads, h0.keep == keep_last ? "last" : "first", h0.budget);
	printf("calls of the memcpy family: %" PRIu64 ", recorded %" PRIu64 " (%.1f%%), dropped %" PRIu64 "\n", calls,
	       records, pct(double(records), double(calls)), calls - records);
	printf("CPU time of the processes: %.3f ms; recording added about %.1f ns a call (%.2f%% of it)\n", cpu_ns / 1e6,
	       calls ? overhead / double(calls) : 0.0, pct(overhead, double(cpu_ns)));
	printf("seen: the calls through the PLT that libuarch_preload.so would take; the C library's own\n"
	       "internal copies (stdio, qsort, realloc) stay the C library's, in the trace as in production\n");

	uint64_t n_op[p_op_count] = {}, b_op[p_op_count] = {};
	uint64_t same_prev = 0, in16 = 0, with_prev = 0;
	uint64_t dist_bucket[5] = {}, src_bucket[5] = {}, src_calls = 0;   // first touch, <=32K, <=1M, <=32M, more
	std::vector<double> gaps;
	auto bucket = [](uint64_t d) {
		if (d == UINT64_MAX)
			return 0;
		uint64_t bytes = d << 12;
		return bytes <= 32768 ? 1 : bytes <= (1u << 20) ? 2 : bytes <= (32u << 20) ? 3 : 4;
	};
	for (const TraceSection &s : secs) {
		Distances dist(s.rec.size());
		std::unordered_map<uint32_t, std::vector<uint64_t>> recent;   // tid -> its last 16 sizes, newest last
		for (size_t i = 0; i < s.rec.size(); i++) {
			const TraceRecord &r = s.rec[i];
			uint32_t op = entry_op(r.entry);
			n_op[op]++;
			b_op[op] += r.size;
			std::vector<uint64_t> &q = recent[r.tid];
			if (!q.empty()) {
				with_prev++;
				same_prev += q.back() == r.size;
				in16 += std::find(q.begin(), q.end(), r.size) != q.end();
			}
			q.push_back(r.size);
			if (q.size() > 16)
				q.erase(q.begin());
			if (r.gap)
				gaps.push_back(double(r.gap) * 1e9 / double(s.header.tick_hz));
			dist_bucket[bucket(dist.distance(r.dst >> 12, i))]++;
			if (op != p_memset) {
				src_calls++;
				src_bucket[bucket(dist.distance(r.src >> 12, i))]++;
			}
			dist.touch(r.dst, r.size, i);
			if (op != p_memset)
				dist.touch(r.src, r.size, i);
		}
	}
	printf("\n%-8s %14s %16s %12s\n", "op", "records", "bytes", "mean bytes");
	for (uint32_t op = 0; op < p_op_count; op++)
		printf("%-8s %14" PRIu64 " %16" PRIu64 " %12.1f\n", op_name(op), n_op[op], b_op[op],
		       n_op[op] ? double(b_op[op]) / double(n_op[op]) : 0.0);
	const char *names[5] = {"first touch", "<=32K", "<=1M", "<=32M", ">32M"};
	printf("\nreuse distance of dst (distinct data the traced calls touched since, 4 KiB pages):");
	for (int k = 0; k < 5; k++)
		printf(" %s %.1f%%", names[k], pct(double(dist_bucket[k]), double(records)));
	printf("\nreuse distance of src:");
	for (int k = 0; k < 5; k++)
		printf(" %s %.1f%%", names[k], pct(double(src_bucket[k]), double(src_calls)));
	printf("\nsizes: the previous call's (same thread) %.1f%%, among its previous 16 %.1f%%\n",
	       pct(double(same_prev), double(with_prev)), pct(double(in16), double(with_prev)));
	if (!gaps.empty()) {
		std::sort(gaps.begin(), gaps.end());
		auto q = [&](double f) { return gaps[size_t(f * double(gaps.size() - 1))]; };
		printf("gap between a thread's calls: median %.0f ns, p10 %.0f ns, p90 %.0f ns\n", q(0.5), q(0.1), q(0.9));
	}
}

void dump_trace(const std::vector<TraceSection> &secs)
{
	printf("# section seq tid entry op size dst src gap_ticks\n");
	for (size_t k = 0; k < secs.size(); k++)
		for (const TraceRecord &r : secs[k].rec)
			printf("%zu %" PRIu64 " %u %s %s %" PRIu64 " 0x%" PRIx64 " 0x%" PRIx64 " %" PRIu64 "\n", k, r.seq, r.tid,
			       entry_name(r.entry), op_name(entry_op(r.entry)), r.size, r.dst, r.src, r.gap);
}

} // namespace uarch::prof
