// The recorder's trace: its region, the tick rate, the calibration of what
// recording costs, and the file (trace.h).
#include "record/trace.h"
#include "dispatch/bind.h"
#include "record/output.h"
#include "sys/sys.h"

namespace uarch::record {

Trace trace;
__thread uint64_t tls_last_tick __attribute__((tls_model("initial-exec")));

namespace {

uint64_t load_ticks, load_ns;   // at load (and where a fork child starts: the same clocks)

uint64_t monotonic_ns()
{
	struct {
		long sec, nsec;
	} t = {0, 0};
	sys::call6(sys::nr_clock_gettime, 1 /* CLOCK_MONOTONIC */, long(&t));
	return uint64_t(t.sec) * 1000000000u + uint64_t(t.nsec);
}

// Ticks per second: what the CPU reports (arm64), else the ticks timed
// against CLOCK_MONOTONIC from load to now, over 2 ms at least.
uint64_t tick_hz()
{
	if (uint64_t f = arch::reported_tick_hz())
		return f;
	uint64_t ns, t;
	do {
		t = arch::ticks();
		ns = monotonic_ns();
	} while (ns - load_ns < 2000000);
	return uint64_t(double(t - load_ticks) * 1e9 / double(ns - load_ns));
}

uint64_t cpu_time_ns()
{
	struct Timeval {
		long sec, usec;
	};
	struct {
		Timeval utime, stime;
		long rest[14];
	} ru;   // struct rusage
	zero_words(&ru, sizeof ru);
	if (sys::call6(sys::nr_getrusage, 0 /* RUSAGE_SELF */, long(&ru)) != 0)
		return 0;
	return uint64_t(ru.utime.sec + ru.stime.sec) * 1000000000u + uint64_t(ru.utime.usec + ru.stime.usec) * 1000u;
}

// The ticks recording adds to one call, 16 times over: small copies
// through the trace path (counted into a scratch block, recorded into a
// scratch ring) against the same copies alone; the faster of 5 runs each.
Block scratch_block;
TraceRecord scratch_rec[64];
alignas(64) char cal_dst[128], cal_src[128];

__attribute__((noinline)) void cal_traced(Trace &t, uint32_t k)
{
	note_into<false>(&scratch_block, e_memcpy, p_memcpy, cal_dst, cal_src, k & 63);
	trace_into(t, e_memcpy, cal_dst, cal_src, k & 63);
	bound_memcpy(cal_dst, cal_src, k & 63);
}

__attribute__((noinline)) void cal_plain(Trace &, uint32_t k) { bound_memcpy(cal_dst, cal_src, k & 63); }

uint64_t overhead_ticks_x16()
{
	Trace t = {scratch_rec, 64, 0, true};
	uint64_t keep_tick = tls_last_tick;
	constexpr uint32_t calls = 4096;
	uint64_t best[2] = {~uint64_t(0), ~uint64_t(0)};
	for (int run = 0; run < 6; run++)   // the first run warms up
		for (int side = 0; side < 2; side++) {
			void (*volatile fn)(Trace &, uint32_t) = side ? cal_traced : cal_plain;
			void (*f)(Trace &, uint32_t) = fn;
			uint64_t t0 = arch::ticks();
			for (uint32_t k = 0; k < calls; k++)
				f(t, k);
			uint64_t dt = arch::ticks() - t0;
			if (run && dt < best[side])
				best[side] = dt;
		}
	tls_last_tick = keep_tick;
	return best[1] > best[0] ? (best[1] - best[0]) * 16 / calls : 0;
}

} // namespace

void trace_start(uint64_t n, bool ring)
{
	if (!n || n > (uint64_t(1) << 32))
		return;
	enum : long { map_private = 0x02, map_anonymous = 0x20, map_noreserve = 0x4000 };
	long m = sys::call6(sys::nr_mmap, 0, long(n * sizeof(TraceRecord)), sys::prot_read | sys::prot_write,
			    map_private | map_anonymous | map_noreserve, -1, 0);
	if (sys::failed(m))
		return;
	trace.rec = reinterpret_cast<TraceRecord *>(m);
	trace.ring = ring;
	load_ticks = arch::ticks();
	load_ns = monotonic_ns();
	__atomic_store_n(&trace.budget, n, __ATOMIC_RELEASE);
	// Another library's constructor, run before this one, may have copied
	// already and so given this thread the counting-only fast path: back
	// to the path that records.
	tls_block = nullptr;
}

void write_trace(const char *path, long pid)
{
	if (!trace.budget)
		return;
	static bool written;
	long fd = open_output(path, written);
	if (fd < 0)
		return;
	written = true;
	uint64_t calls = __atomic_load_n(&trace.next, __ATOMIC_ACQUIRE);
	uint64_t n = calls < trace.budget ? calls : trace.budget;
	uint64_t first = calls - n;   // the index of the oldest call kept
	if (!trace.ring)
		first = 0;
	uint64_t complete = 0;
	for (uint64_t k = 0; k < n; k++)
		complete += __atomic_load_n(&trace.rec[(first + k) % trace.budget].seq, __ATOMIC_ACQUIRE) == first + k + 1;
	TraceHeader h = {{'U', 'A', 'R', 'C', 'H', 'T', 'R', 'C'}, trace_version, sizeof(TraceHeader),
			 sizeof(TraceRecord), trace.ring ? keep_last : keep_first, trace.budget, tick_hz(),
			 cpu_time_ns(), calls, n, calls - complete, uint64_t(pid), load_ns, overhead_ticks_x16()};
	uint64_t at = first % trace.budget;   // ring: the oldest, then around
	uint64_t tail = n < trace.budget - at ? n : trace.budget - at;
	if (write_all(fd, &h, sizeof h) && write_all(fd, &trace.rec[at], tail * sizeof(TraceRecord)))
		write_all(fd, &trace.rec[0], (n - tail) * sizeof(TraceRecord));
	sys::close(fd);
}

} // namespace uarch::record
