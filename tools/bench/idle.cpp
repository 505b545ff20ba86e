// uarch-bench idle: wake-up latency between two threads pinned to different
// CPUs, as seed 004 measured HLT against MWAIT: a distribution, not a mean.
//
// One sample: the waiter announces it is about to wait and waits on a word;
// the waker sees the announcement, lets about 1 us, 50 us or 5 ms pass
// (spinning for the short ones, sleeping for 5 ms), takes a timestamp right
// before its store, stores, and wakes. The waiter takes a timestamp right
// after its wait returns. Latency = waiter's stamp - waker's stamp (the TSC
// with LFENCE on x86-64, synchronised across CPUs; the generic timer on
// arm64).
//
// Mechanisms (columns): uarch's bound policy through libuarch.so; each
// uarch stage this CPU has, alone (spin; umwait, tpause, mwaitx where
// present; futex); std::atomic<uint32_t>::wait/notify_one (libstdc++);
// a raw futex (FUTEX_WAIT_PRIVATE, and FUTEX_WAKE_PRIVATE on every wake);
// a pure PAUSE spin. Per wait length a table of percentiles, min, max,
// samples, and the waiter's CPU time (CLOCK_THREAD_CPUTIME_ID) as a share
// of the wall time it spent in the loop. "uarch fixed budget" is the bound
// policy without the spin budget learnt per address (src/idle/budget.h).
// Then the cost of a wake with no sleeper, and the targets: 1 us p50 within
// 1.3x a pure spin's; on 20 us and 200 us waits the waiter's CPU within 5
// points of the raw futex's.
//
// uarch-bench idle [--samples N] [--quick] [--waits 1us,50us,5ms]
//                  [--mechs name,name...] [--csv FILE]   (default waits 1us,20us,50us,200us,5ms)
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <climits>
#include <functional>
#include <string>
#include <thread>
#include <vector>
#include "bench.h"
#include "report.h"
#include "dispatch/state.h"
#include "idle/idle.h"
#include "idle/stages.h"
#include "uarch.h"

namespace {

using uarch::IdlePolicy;
using uarch::Stage;

// ---- time ----------------------------------------------------------------

inline uint64_t stamp()
{
#if defined(__x86_64__)
	// LFENCE: the TSC is read only after the loads before it (the one that
	// saw the new value) have completed.
	uint32_t lo, hi;
	__asm__ __volatile__("lfence; rdtsc" : "=a"(lo), "=d"(hi) :: "memory");
	return (uint64_t(hi) << 32) | lo;
#elif defined(__aarch64__)
	uint64_t v;
	__asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v) :: "memory");
	return v;
#else
	return uarch::idle::clock_now();
#endif
}

double ticks_to_ns(int64_t t) { return double(t) * 1e9 / double(uarch::idle::clock_hz()); }

int64_t mono_ns(clockid_t c)
{
	timespec ts;
	clock_gettime(c, &ts);
	return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

inline void relax() { uarch::idle::cpu_relax(); }

// ---- mechanisms -----------------------------------------------------------

long futex(void *a, int op, uint32_t v)
{
	return syscall(SYS_futex, a, op, v, nullptr, nullptr, 0);
}

struct Word {
	alignas(64) std::atomic<uint32_t> a{0};
	uint32_t *raw() { return reinterpret_cast<uint32_t *>(&a); }
};

struct Mech {
	std::string name;
	// Returns once the word differs from v.
	std::function<void(Word &, uint32_t v)> wait;
	// Called by the waker after its store.
	std::function<void(Word &)> wake;
};

IdlePolicy single(Stage s)
{
	IdlePolicy p{};
	p.stages[0] = s;
	p.nstages = 1;
	p.spin_ns = 0;
	p.monitor_ns = 0;
	p.umwait_c01 = uarch::state().plan.idle.umwait_c01;
	return p;
}

std::vector<Mech> all_mechs()
{
	std::vector<Mech> m;
	const uarch::Cpu &cpu = uarch::state().cpu;
	m.push_back({std::string("uarch ") + uarch_impl("idle_wait"),
		     [](Word &w, uint32_t v) {
			     while (w.a.load(std::memory_order_acquire) == v)
				     uarch_idle_wait(w.raw(), v, -1);
		     },
		     [](Word &w) { uarch_idle_wake(w.raw(), 1); }});
	// The bound policy with its spin budget fixed at spin_ns: the wait as
	// it was before the budget learnt per address.
	m.push_back({"uarch fixed budget",
		     [](Word &w, uint32_t v) {
			     while (w.a.load(std::memory_order_acquire) == v)
				     uarch::idle::wait_fixed_budget(w.raw(), v, -1, uarch::state().plan.idle);
		     },
		     [](Word &w) { uarch::idle_wake(w.raw(), 1); }});
	for (Stage s : {Stage::spin, Stage::umwait, Stage::tpause, Stage::mwaitx, Stage::wfe, Stage::wfet,
			Stage::futex}) {
		if (!uarch::stage_runs_on(s, cpu))
			continue;
		IdlePolicy p = single(s);
		m.push_back({std::string("uarch:") + uarch::stage_name(s),
			     [p](Word &w, uint32_t v) {
				     while (w.a.load(std::memory_order_acquire) == v)
					     uarch::idle_wait(w.raw(), v, -1, p);
			     },
			     [](Word &w) { uarch::idle_wake(w.raw(), 1); }});
	}
	m.push_back({"std::atomic::wait", [](Word &w, uint32_t v) { w.a.wait(v, std::memory_order_acquire); },
		     [](Word &w) { w.a.notify_one(); }});
	m.push_back({"raw futex",
		     [](Word &w, uint32_t v) {
			     while (w.a.load(std::memory_order_acquire) == v)
				     futex(w.raw(), FUTEX_WAIT_PRIVATE, v);
		     },
		     [](Word &w) { futex(w.raw(), FUTEX_WAKE_PRIVATE, 1); }});
	m.push_back({"pure spin",
		     [](Word &w, uint32_t v) {
			     while (w.a.load(std::memory_order_acquire) == v)
				     relax();
		     },
		     [](Word &) {}});
	return m;
}

// ---- one run -----------------------------------------------------------------

struct Result {
	std::vector<double> lat_ns;   // sorted
	double cpu_share;             // waiter CPU time / wall time
};

std::vector<int> allowed_cpus()
{
	cpu_set_t set;
	CPU_ZERO(&set);
	std::vector<int> v;
	if (sched_getaffinity(0, sizeof set, &set) == 0)
		for (int i = 0; i < CPU_SETSIZE; i++)
			if (CPU_ISSET(i, &set))
				v.push_back(i);
	return v;
}

void pin(int cpu)
{
	if (cpu < 0)
		return;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

Result run(const Mech &m, uint64_t wait_ns, uint32_t samples, int cpu_waiter, int cpu_waker)
{
	Word w;
	alignas(64) std::atomic<uint32_t> ready{0};
	alignas(64) std::atomic<uint64_t> t_store{0};
	std::vector<uint64_t> lat(samples);
	int64_t cpu_ns = 0, wall_ns = 0;
	uint64_t delay_ticks = uint64_t(double(wait_ns) * double(uarch::idle::clock_hz()) / 1e9);

	std::thread waiter([&] {
		pin(cpu_waiter);
		int64_t c0 = mono_ns(CLOCK_THREAD_CPUTIME_ID), w0 = mono_ns(CLOCK_MONOTONIC);
		for (uint32_t i = 0; i < samples; i++) {
			ready.store(i + 1, std::memory_order_release);
			m.wait(w, i);
			uint64_t t = stamp();
			lat[i] = t - t_store.load(std::memory_order_relaxed);
		}
		cpu_ns = mono_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		wall_ns = mono_ns(CLOCK_MONOTONIC) - w0;
	});
	std::thread waker([&] {
		pin(cpu_waker);
		for (uint32_t i = 0; i < samples; i++) {
			while (ready.load(std::memory_order_acquire) != i + 1)
				relax();
			if (wait_ns >= 1000000) {
				timespec ts = {time_t(wait_ns / 1000000000), long(wait_ns % 1000000000)};
				nanosleep(&ts, nullptr);
			} else {
				uint64_t t0 = stamp();
				while (stamp() - t0 < delay_ticks)
					relax();
			}
			t_store.store(stamp(), std::memory_order_relaxed);
			w.a.store(i + 1, std::memory_order_release);
			m.wake(w);
		}
	});
	waker.join();
	waiter.join();
	Result r;
	r.lat_ns.reserve(samples);
	for (uint64_t t : lat)
		r.lat_ns.push_back(int64_t(t) < 0 ? 0.0 : ticks_to_ns(int64_t(t)));
	std::sort(r.lat_ns.begin(), r.lat_ns.end());
	r.cpu_share = wall_ns > 0 ? double(cpu_ns) / double(wall_ns) : 0;
	return r;
}

double pct(const std::vector<double> &v, double q)
{
	if (v.empty())
		return 0;
	// Nearest rank.
	size_t k = size_t(q / 100.0 * double(v.size()) + 0.999999);
	k = k ? k - 1 : 0;
	return v[std::min(k, v.size() - 1)];
}

// ---- wake with no sleeper ----------------------------------------------------

template <class F> double ns_per_call(F f)
{
	constexpr int calls = 200000, reps = 15;
	std::vector<double> v;
	for (int r = 0; r < reps; r++) {
		int64_t t0 = mono_ns(CLOCK_MONOTONIC);
		for (int i = 0; i < calls; i++)
			f();
		v.push_back(double(mono_ns(CLOCK_MONOTONIC) - t0) / calls);
	}
	std::sort(v.begin(), v.end());
	return v[reps / 2];
}

std::vector<std::string> split(const char *s)
{
	std::vector<std::string> out;
	std::string cur;
	for (; *s; s++) {
		if (*s == ',') {
			out.push_back(cur);
			cur.clear();
		} else {
			cur += *s;
		}
	}
	if (!cur.empty())
		out.push_back(cur);
	return out;
}

bool parse_wait(const std::string &s, uint64_t *ns)
{
	char *end;
	double v = strtod(s.c_str(), &end);
	std::string u(end);
	if (u == "ns") *ns = uint64_t(v);
	else if (u == "us") *ns = uint64_t(v * 1e3);
	else if (u == "ms") *ns = uint64_t(v * 1e6);
	else if (u == "s") *ns = uint64_t(v * 1e9);
	else return false;
	return true;
}

std::string wait_label(uint64_t ns)
{
	char b[32];
	if (ns >= 1000000) snprintf(b, sizeof b, "%g ms", ns / 1e6);
	else if (ns >= 1000) snprintf(b, sizeof b, "%g us", ns / 1e3);
	else snprintf(b, sizeof b, "%llu ns", (unsigned long long)ns);
	return b;
}

// What the command line asked for.
struct IdleArgs {
	report::Options o;
	uint32_t samples = 0;   // 0: the default for the wait length
	std::vector<uint64_t> waits = {1000, 20000, 50000, 200000, 5000000};
	std::vector<std::string> only;   // mechanisms to run; empty: all
};

// Fills a from the command line; -1 to go on, else the exit status (bad
// paths fail here, before minutes of measuring).
int parse_idle(int argc, char **argv, IdleArgs &a)
{
	a.o = report::parse(argc, argv);
	report::Options &o = a.o;
	for (size_t i = 1; i < o.rest.size(); i++) {
		std::string arg = o.rest[i];
		auto val = [&]() -> const char * {
			if (i + 1 >= o.rest.size()) {
				fprintf(stderr, "%s: %s needs a value\n", argv[0], arg.c_str());
				exit(2);
			}
			return o.rest[++i];
		};
		if (arg == "--samples") a.samples = uint32_t(strtoul(val(), nullptr, 10));
		else if (arg == "--mechs") a.only = split(val());
		else if (arg == "--waits") {
			a.waits.clear();
			for (auto &s : split(val())) {
				uint64_t ns;
				if (!parse_wait(s, &ns)) {
					fprintf(stderr, "%s: bad wait '%s' (e.g. 1us, 50us, 5ms)\n", argv[0], s.c_str());
					return 2;
				}
				a.waits.push_back(ns);
			}
		} else if (arg == "-h" || arg == "--help") {
			printf("usage: %s [--samples N] [--quick] [--waits 1us,50us,5ms] [--mechs a,b] [--csv FILE] [--json FILE]\n"
			       "  --samples N  samples per table cell (default 10000; --quick: 2000, and 200 for waits >= 1 ms)\n",
			       argv[0]);
			return 0;
		} else {
			fprintf(stderr, "%s: unknown argument '%s'\n", argv[0], arg.c_str());
			return 2;
		}
	}
	if (!o.plot.empty()) {
		fprintf(stderr, "uarch-bench idle: --plot: only uarch-bench mem draws a plot\n");
		return 2;
	}
	if (!report::check_outputs("uarch-bench idle", o))
		return 2;
	return -1;
}

// Where and how the latency table is measured.
struct IdlePlan {
	int cw, ck;   // waiter's and waker's CPU; -1: not pinned
	uarch::idle::ClockSource src;
	std::string head;   // the latency table's title
	std::vector<Mech> mechs;
};

// Picks the CPUs and the mechanisms, and words the latency table's title.
IdlePlan plan_idle(const IdleArgs &a)
{
	IdlePlan p;
	std::vector<int> cpus = allowed_cpus();
	p.cw = cpus.size() >= 2 ? cpus[0] : -1;
	p.ck = cpus.size() >= 2 ? cpus[1] : -1;
	uint64_t hz = uarch::idle::clock_hz(&p.src);
	const uarch::IdlePolicy &pol = uarch::state().plan.idle;
	char head[512];
	snprintf(head, sizeof head,
		 "uarch-bench idle on %s: wake-up latency, waiter on CPU %d, waker on CPU %d\n"
		 "policy: %s, spin %u ns, monitor %u ns, c0.1 %u; clock %.3f MHz (%s)%s\n"
		 "latency in ns: the waker's stamp before its store -> the waiter's stamp after its wait",
		 cpu_name().c_str(), p.cw, p.ck, uarch_impl("idle_wait"), pol.spin_ns, pol.monitor_ns, pol.umwait_c01,
		 hz / 1e6, uarch::idle::clock_source_name(p.src),
		 p.cw < 0 ? "\nnote: fewer than 2 CPUs allowed: threads are not pinned" : "");
	p.head = head;
	for (auto &m : all_mechs())
		if (a.only.empty() || std::find(a.only.begin(), a.only.end(), m.name) != a.only.end())
			p.mechs.push_back(m);
	return p;
}

// One latency cell, as the targets compare it.
struct Key { uint64_t wait; std::string mech; double p50, share; };

// Measures every wait length with every mechanism: the latency table, and
// in keys what the targets need of it.
report::Table run_latency(const IdleArgs &a, const IdlePlan &p, std::vector<Key> &keys)
{
	static const double qs[] = {25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.99};
	report::Table lat{"latency", p.head, {"wait", "mechanism", "samples"}, {}, {}};
	for (double q : qs) {
		char lab[32];
		snprintf(lab, sizeof lab, "p%g", q);
		lat.cols.push_back(lab);
	}
	for (const char *c : {"min", "max", "waiter_cpu_pct"})
		lat.cols.push_back(c);
	for (uint64_t wns : a.waits) {
		uint32_t n = a.samples ? a.samples : a.o.quick ? (wns >= 1000000 ? 200 : 2000) : 10000;
		for (auto &m : p.mechs) {
			// A short warm-up (first-use costs: clock calibration, page
			// faults, the futex hash) outside the samples.
			run(m, wns, std::min<uint32_t>(n, wns >= 1000000 ? 5 : 200), p.cw, p.ck);
			Result r = run(m, wns, n, p.cw, p.ck);
			std::vector<report::Cell> row = {wait_label(wns), m.name, {double(r.lat_ns.size()), 0}};
			for (double q : qs)
				row.push_back({pct(r.lat_ns, q), 0});
			row.push_back({r.lat_ns.empty() ? 0.0 : r.lat_ns.front(), 0});
			row.push_back({r.lat_ns.empty() ? 0.0 : r.lat_ns.back(), 0});
			row.push_back({r.cpu_share * 100, 1});
			lat.rows.push_back(row);
			keys.push_back({wns, m.name, pct(r.lat_ns, 50), r.cpu_share});
		}
	}
	return lat;
}

// A wake with no sleeper: the call a waker makes when nobody waits. *c_api
// gets the libuarch.so call's cost, which has a target.
report::Table run_wake_no_sleeper(double *c_api)
{
	Word w;
	*c_api = ns_per_call([&] { uarch_idle_wake(w.raw(), 1); });
	double c_core = ns_per_call([&] { uarch::idle_wake(w.raw(), 1); });
	double c_atomic = ns_per_call([&] { w.a.notify_one(); });
	double c_futex = ns_per_call([&] { futex(w.raw(), FUTEX_WAKE_PRIVATE, 1); });
	report::Table nos{"wake_no_sleeper", "wake with no sleeper (ns per call, median of 15 x 200000 calls)",
			  {"call", "ns"}, {}, {}};
	nos.rows = {{"uarch_idle_wake (libuarch.so)", {*c_api, 1}},
		    {"uarch::idle_wake (linked in)", {c_core, 1}},
		    {"std::atomic::notify_one", {c_atomic, 1}},
		    {"raw FUTEX_WAKE", {c_futex, 1}}};
	return nos;
}

// The targets, where this run has the cells they compare.
report::Table targets_table(const std::vector<Key> &keys, double c_api)
{
	auto find = [&](uint64_t wait, const std::string &mech) -> const Key * {
		for (auto &k : keys)
			if (k.wait == wait && k.mech == mech)
				return &k;
		return nullptr;
	};
	report::Table tg{"targets", "targets", {"target", "measured", "limit", "verdict"}, {}, {}};
	auto target = [&](const std::string &what, double got, double limit, bool ok) {
		tg.rows.push_back({what, {got, 2}, {limit, 2}, ok ? "ok" : "MISSED"});
	};
	std::string pname = std::string("uarch ") + uarch_impl("idle_wait");
	const Key *p1 = find(1000, pname), *s1 = find(1000, "pure spin"), *a1 = find(1000, "std::atomic::wait");
	if (p1 && s1)
		target("1 us: p50 / pure spin's p50", p1->p50 / s1->p50, 1.3, p1->p50 <= 1.3 * s1->p50);
	if (p1 && a1)
		target("1 us: p50 / std::atomic::wait's p50", p1->p50 / a1->p50, 1.0, p1->p50 <= a1->p50);
	for (uint64_t wns : {uint64_t(20000), uint64_t(200000)}) {
		const Key *u = find(wns, pname), *x = find(wns, "uarch fixed budget"), *f = find(wns, "raw futex");
		if (!u || !f)
			continue;
		target(wait_label(wns) + ": waiter CPU % - raw futex's", (u->share - f->share) * 100, 5,
		       u->share <= f->share + 0.05);
		if (x)
			tg.notes.push_back(wait_label(wns) + ": waiter CPU with the fixed spin budget " +
					   std::to_string(x->share * 100).substr(0, 5) + "%");
	}
	const Key *p5 = find(5000000, pname), *f5 = find(5000000, "raw futex");
	if (p5)
		target("5 ms: waiter CPU %", p5->share * 100, 5, p5->share <= 0.05);
	if (p5 && f5)
		target("5 ms: p50 / raw futex's p50", p5->p50 / f5->p50, 1.2, p5->p50 <= 1.2 * f5->p50);
	target("wake, no sleeper: ns", c_api, 20, c_api < 20);
	return tg;
}

} // namespace

int bench_idle(int argc, char **argv)
{
	IdleArgs a;
	if (int rc = parse_idle(argc, argv, a); rc >= 0)
		return rc;
	IdlePlan p = plan_idle(a);
	std::vector<Key> keys;
	report::Table lat = run_latency(a, p, keys);
	double c_api;
	report::Table nos = run_wake_no_sleeper(&c_api);
	report::Table tg = targets_table(keys, c_api);
	bool ok = report::emit("uarch-bench idle", a.o,
			       {{"cpu", cpu_name()}, {"idle_wait", uarch_impl("idle_wait")},
				{"clock", uarch::idle::clock_source_name(p.src)}},
			       {lat, nos, tg});
	return ok ? 0 : 1;
}
