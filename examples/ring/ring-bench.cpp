// ring-bench: a producer and a consumer on two pinned CPUs move N messages
// through a uarch_ring::Ring, once for every combination of barrier, wait
// and copy asked for, round-robin over several rounds; prints the medians
// as a table and the ratios seed 003 is about.
//
//   ring-bench [--quick] [--messages N] [--trickle-messages N] [--size B]
//              [--capacity C] [--mode burst|trickle|both] [--pause-us LIST]
//              [--rounds R] [--combos axes|all] [--barrier LIST]
//              [--wait LIST] [--copy LIST] [--cpus P,C] [--no-seed] [--verbose]
//
// burst: the producer pushes as fast as it can. trickle: it sleeps U
// microseconds after every message, for each U in the list (default 20 and
// 200: shorter and much longer than uarch's 15 us spin before the futex).
// Both sides sleep when idle unless the wait is "spin" (the seed's ringtest
// --sleep). "burst 1 CPU" rows are the seed's own setup: both threads on the
// producer's CPU, sleeping in the kernel (futex), barrier by barrier.
#include "ring.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>

#ifndef RING_BENCH_LINK
#define RING_BENCH_LINK "unknown"
#endif

using namespace uarch_ring;

namespace {

enum class Mode { burst, trickle };
const char *mode_name(Mode m) { return m == Mode::burst ? "burst" : "trickle"; }

struct Config {
	Mode mode = Mode::burst;
	uint32_t messages = 0, size = 64, capacity = 256, pause_us = 0;   // set per row
	int cpu_p = 0, cpu_c = 1;
};

struct Result {
	double secs = 0, cons_cpu = 0, prod_cpu = 0; // CPU shares: thread CPU time / wall
	uint64_t notifies = 0, woken = 0, waits = 0;
	uint64_t cons_blocked = 0, prod_blocked = 0;
	uint64_t errors = 0;
};

double now(clockid_t c)
{
	timespec ts;
	clock_gettime(c, &ts);
	return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (int e = pthread_setaffinity_np(pthread_self(), sizeof set, &set))
		std::fprintf(stderr, "ring-bench: cannot pin to CPU %d: %s\n", cpu, std::strerror(e));
}

// Both threads pinned, then released together.
void gate(std::atomic<int> &ready)
{
	ready.fetch_add(1);
	while (ready.load() < 2)
		sched_yield();
}

template <class B, class W, class C>
Result run_one(const Config &cfg)
{
	Ring<B, W, C> ring(cfg.capacity, cfg.size);
	std::atomic<int> ready{0};
	Result r;
	double prod_wall = 0, prod_cpu = 0;

	std::thread producer([&] {
		pin(cfg.cpu_p);
		prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0); // 20 us pauses, not 70
		std::vector<char> msg(cfg.size, 'x');
		const timespec pause = {0, long(cfg.pause_us) * 1000};
		gate(ready);
		double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID);
		for (uint64_t i = 0; i < cfg.messages; i++) {
			std::memcpy(msg.data(), &i, std::min<size_t>(8, cfg.size));
			ring.push(msg.data(), cfg.size);
			if (cfg.mode == Mode::trickle)
				nanosleep(&pause, nullptr);
		}
		prod_cpu = now(CLOCK_THREAD_CPUTIME_ID) - c0;
		prod_wall = now(CLOCK_MONOTONIC) - t0;
	});
	std::thread consumer([&] {
		pin(cfg.cpu_c);
		std::vector<char> buf(cfg.size);
		gate(ready);
		double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID);
		const uint64_t keep = cfg.size >= 8 ? ~0ull : (1ull << (8 * cfg.size)) - 1;
		for (uint64_t i = 0; i < cfg.messages; i++) {
			long n = ring.pop(buf.data(), cfg.size);
			uint64_t seq = 0;
			std::memcpy(&seq, buf.data(), std::min<size_t>(8, cfg.size));
			if (n != long(cfg.size) || seq != (i & keep))
				r.errors++;
		}
		r.cons_cpu = now(CLOCK_THREAD_CPUTIME_ID) - c0;
		r.secs = now(CLOCK_MONOTONIC) - t0;
	});
	producer.join();
	consumer.join();
	r.cons_cpu /= r.secs;
	r.prod_cpu = prod_cpu / prod_wall;
	const SideStats &p = ring.producer_stats(), &c = ring.consumer_stats();
	r.notifies = p.notifies + c.notifies;
	r.woken = p.woken + c.woken;
	r.waits = p.waits + c.waits;
	r.cons_blocked = c.blocked;
	r.prod_blocked = p.blocked;
	return r;
}

struct Combo {
	const char *barrier, *wait, *copy;
	Result (*run)(const Config &);
	bool all_uarch_but(int axis) const // axis: 0 barrier, 1 wait, 2 copy, -1 none
	{
		const char *v[3] = {barrier, wait, copy};
		for (int i = 0; i < 3; i++)
			if (i != axis && std::strcmp(v[i], "uarch"))
				return false;
		return true;
	}
};

template <class B, class W, class C>
Combo combo()
{
	return {B::name, W::name, C::name, &run_one<B, W, C>};
}

template <class B>
void add_barrier(std::vector<Combo> &v)
{
	v.push_back(combo<B, WaitUarch, CopyUarch>());
	v.push_back(combo<B, WaitUarch, CopyLibc>());
	v.push_back(combo<B, WaitUarchEager, CopyUarch>());
	v.push_back(combo<B, WaitFutex, CopyUarch>());
	v.push_back(combo<B, WaitFutex, CopyLibc>());
	v.push_back(combo<B, WaitSpin, CopyUarch>());
	v.push_back(combo<B, WaitSpin, CopyLibc>());
}

std::vector<Combo> all_combos()
{
	std::vector<Combo> v;
	add_barrier<BarrierUarch>(v);
#if defined(__x86_64__)
	add_barrier<BarrierMfence>(v);
#endif
	add_barrier<BarrierSeqCst>(v);
	return v;
}

bool listed(const std::string &list, const char *name)
{
	if (list.empty())
		return true;
	size_t pos = 0;
	while (pos <= list.size()) {
		size_t end = list.find(',', pos);
		if (end == std::string::npos)
			end = list.size();
		if (list.compare(pos, end - pos, name) == 0)
			return true;
		pos = end + 1;
	}
	return false;
}

double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	size_t n = v.size();
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct Row {
	Mode mode;
	uint32_t pause_us;
	bool seed; // seed 003's setup: both threads on one CPU
	Combo c;
	std::vector<Result> runs;
	uint32_t messages;
	std::string label() const
	{
		if (seed)
			return "burst 1 CPU";
		return mode == Mode::burst ? "burst" : "trickle " + std::to_string(pause_us) + "us";
	}
	double rate() const
	{
		std::vector<double> v;
		for (auto &r : runs)
			v.push_back(messages / r.secs);
		return median(v);
	}
	double med(std::function<double(const Result &)> f) const
	{
		std::vector<double> v;
		for (auto &r : runs)
			v.push_back(f(r));
		return median(v);
	}
};

void usage()
{
	std::fputs("usage: ring-bench [--quick] [--messages N] [--trickle-messages N] [--size B]\n"
		   "                  [--capacity C] [--mode burst|trickle|both] [--pause-us LIST]\n"
		   "                  [--rounds R] [--combos axes|all] [--barrier LIST] [--wait LIST]\n"
		   "                  [--copy LIST] [--cpus P,C] [--no-seed] [--verbose]\n"
		   "  LISTs are comma-separated: barrier uarch,mfence,seq_cst; wait uarch,eager,futex,spin;\n"
		   "  copy uarch,libc. axes: the all-uarch row and each primitive swapped alone.\n"
		   "  Unless --no-seed: seed 003's setup too (burst, both threads on CPU P, futex).\n",
		   stdout);
}

// Bad input: one line on stderr, exit status 2.
[[noreturn]] void bad(const std::string &what)
{
	std::fprintf(stderr, "ring-bench: %s (--help for usage)\n", what.c_str());
	std::exit(2);
}

} // namespace

int main(int argc, char **argv)
{
	Config base;
	uint32_t burst_n = 1000000, trickle_n = 3000, rounds = 7;
	std::string modes = "both", combos = "axes", barriers, waits, copies, pauses_arg = "20,200";
	bool seed_rows = true, verbose = false;
	bool cpus_given = false;
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		auto val = [&]() -> const char * {
			if (i + 1 >= argc)
				bad(a + " needs a value");
			return argv[++i];
		};
		if (a == "--quick")
			burst_n = 300000, trickle_n = 500, rounds = 5;
		else if (a == "--messages")
			burst_n = uint32_t(std::strtoul(val(), nullptr, 0));
		else if (a == "--trickle-messages")
			trickle_n = uint32_t(std::strtoul(val(), nullptr, 0));
		else if (a == "--size")
			base.size = uint32_t(std::strtoul(val(), nullptr, 0));
		else if (a == "--capacity")
			base.capacity = uint32_t(std::strtoul(val(), nullptr, 0));
		else if (a == "--pause-us")
			pauses_arg = val();
		else if (a == "--rounds")
			rounds = uint32_t(std::strtoul(val(), nullptr, 0));
		else if (a == "--verbose" || a == "-v")
			verbose = true;
		else if (a == "--no-seed")
			seed_rows = false;
		else if (a == "--mode")
			modes = val();
		else if (a == "--combos")
			combos = val();
		else if (a == "--barrier")
			barriers = val();
		else if (a == "--wait")
			waits = val();
		else if (a == "--copy")
			copies = val();
		else if (a == "--cpus") {
			if (std::sscanf(val(), "%d,%d", &base.cpu_p, &base.cpu_c) != 2)
				bad("--cpus wants P,C (two CPU numbers)");
			cpus_given = true;
		} else if (a == "--help" || a == "-h") {
			usage();
			return 0;
		} else {
			bad("unknown argument '" + a + "'");
		}
	}
	if (base.size == 0 || rounds == 0)
		bad("--size and --rounds must be positive");
	if (modes != "burst" && modes != "trickle" && modes != "both")
		bad("--mode is burst, trickle or both, not '" + modes + "'");
	if (combos != "axes" && combos != "all")
		bad("--combos is axes or all, not '" + combos + "'");

	// Default CPUs: the first two this process may run on.
	if (!cpus_given) {
		cpu_set_t set;
		CPU_ZERO(&set);
		sched_getaffinity(0, sizeof set, &set);
		std::vector<int> cpus;
		for (int c = 0; c < CPU_SETSIZE && cpus.size() < 2; c++)
			if (CPU_ISSET(c, &set))
				cpus.push_back(c);
		base.cpu_p = cpus.empty() ? 0 : cpus[0];
		base.cpu_c = cpus.size() > 1 ? cpus[1] : base.cpu_p;
	}
	const bool one_cpu = base.cpu_p == base.cpu_c;
	std::vector<uint32_t> pauses;
	for (const char *p = pauses_arg.c_str(); *p;) {
		char *end;
		unsigned long u = std::strtoul(p, &end, 10);
		if (end == p || (*end && *end != ',') || u > 1000000)
			bad("--pause-us wants microseconds (0..1000000), comma-separated: '" + pauses_arg + "'");
		pauses.push_back(uint32_t(u));
		p = *end ? end + 1 : end;
	}
	if (pauses.empty())
		bad("--pause-us: an empty list");

	std::vector<Row> rows;
	std::vector<std::pair<Mode, uint32_t>> paces = {{Mode::burst, 0}};
	for (uint32_t u : pauses)
		paces.push_back({Mode::trickle, u});
	for (auto [m, pause] : paces) {
		if (modes != "both" && modes != mode_name(m))
			continue;
		for (const Combo &c : all_combos()) {
			if (!listed(barriers, c.barrier) || !listed(waits, c.wait) || !listed(copies, c.copy))
				continue;
			// On one CPU a spinning side holds the CPU the other needs.
			if (one_cpu && waits.empty() && !std::strcmp(c.wait, "spin"))
				continue;
			if (combos == "axes") {
				// At 20 us a message only the wait matters.
				bool keep = m == Mode::burst ? c.all_uarch_but(0) || c.all_uarch_but(1) ||
								       c.all_uarch_but(2)
							     : c.all_uarch_but(1);
				if (!keep && barriers.empty() && waits.empty() && copies.empty())
					continue;
			}
			rows.push_back({m, pause, false, c, {}, m == Mode::burst ? burst_n : trickle_n});
		}
	}
	// Seed 003's own measurement: ringtest --sleep with host and guest on
	// CPU 0, so every message pays the barriers and each side sleeps in the
	// kernel while the other fills or drains the ring.
	if (seed_rows && !one_cpu && modes != "trickle" && listed(waits, "futex") && listed(copies, "uarch"))
		for (const Combo &c : all_combos())
			if (listed(barriers, c.barrier) && !std::strcmp(c.wait, "futex") && !std::strcmp(c.copy, "uarch"))
				rows.push_back({Mode::burst, 0, true, c, {}, burst_n});
	if (rows.empty()) {
		std::fputs("ring-bench: no combination selected\n", stderr);
		return 2;
	}

	std::printf("ring-bench (%s): producer CPU %d, consumer CPU %d, %u-byte messages, capacity %u\n",
		    RING_BENCH_LINK, base.cpu_p, base.cpu_c, base.size, base.capacity);
	std::printf("uarch: memcpy=%s smp_mb=%s idle_wait=%s; burst %u msgs, trickle %u msgs "
		    "(%s us pauses), %u rounds round-robin, medians\n",
		    uarch_impl("memcpy"), uarch_impl("smp_mb"), uarch_impl("idle_wait"), burst_n, trickle_n,
		    pauses_arg.c_str(), rounds);
	std::fflush(stdout);

	for (uint32_t r = 0; r < rounds; r++)
		for (size_t k = 0; k < rows.size(); k++) {
			Row &row = rows[(k + r) % rows.size()];
			Config cfg = base;
			cfg.mode = row.mode;
			cfg.pause_us = row.pause_us;
			if (row.seed)
				cfg.cpu_c = cfg.cpu_p;
			cfg.messages = row.messages;
			row.runs.push_back(row.c.run(cfg));
			if (verbose) {
				const Result &x = row.runs.back();
				std::printf("  round %u %-13s %-8s %-6s %-6s %8.3f Mmsg/s  notify %" PRIu64 " sleeps %" PRIu64
					    " cons CPU %.0f%%\n",
					    r, row.label().c_str(), row.c.barrier, row.c.wait, row.c.copy,
					    row.messages / x.secs / 1e6, x.notifies, x.waits, 100 * x.cons_cpu);
			}
		}

	uint64_t errors = 0;
	std::printf("\n%-13s %-8s %-6s %-6s %10s %8s %11s %10s %11s %9s %9s %9s %9s\n", "mode", "barrier", "wait",
		    "copy", "Mmsg/s", "ns/msg", "notify/msg", "woken/msg", "sleeps/msg", "empty/msg", "full/msg",
		    "cons CPU", "prod CPU");
	for (const Row &row : rows) {
		double rate = row.rate(), n = row.messages;
		std::printf("%-13s %-8s %-6s %-6s %10.3f %8.1f %11.3f %10.3f %11.3f %9.3f %9.3f %8.0f%% %8.0f%%\n",
			    row.label().c_str(), row.c.barrier, row.c.wait, row.c.copy, rate / 1e6, 1e9 / rate,
			    row.med([&](const Result &x) { return x.notifies / n; }),
			    row.med([&](const Result &x) { return x.woken / n; }),
			    row.med([&](const Result &x) { return x.waits / n; }),
			    row.med([&](const Result &x) { return x.cons_blocked / n; }),
			    row.med([&](const Result &x) { return x.prod_blocked / n; }),
			    100 * row.med([](const Result &x) { return x.cons_cpu; }),
			    100 * row.med([](const Result &x) { return x.prod_cpu; }));
		for (auto &x : row.runs)
			errors += x.errors;
	}

	auto find = [&](Mode m, const char *b, const char *w, const char *c, uint32_t pause = 0,
			bool seed = false) -> const Row * {
		for (const Row &row : rows)
			if (row.mode == m && row.pause_us == pause && row.seed == seed && !std::strcmp(row.c.barrier, b) && !std::strcmp(row.c.wait, w) &&
			    !std::strcmp(row.c.copy, c))
				return &row;
		return nullptr;
	};
	std::printf("\n");
	for (const char *other : {"mfence", "seq_cst"})
		if (const Row *u = find(Mode::burst, "uarch", "futex", "uarch", 0, true),
		    *o = find(Mode::burst, other, "futex", "uarch", 0, true);
		    u && o)
			std::printf("barrier, seed 003's setup (burst, both sides on CPU %d, futex sleeps): uarch %.2fx the "
				    "messages/s of %s (seed: 0.92 s -> 0.58 s, 1.59x)\n",
				    base.cpu_p, u->rate() / o->rate(), other);
	for (const char *w : {"uarch", "futex", "spin"})
		for (const char *other : {"mfence", "seq_cst"}) {
			const Row *u = find(Mode::burst, "uarch", w, "uarch"), *o = find(Mode::burst, other, w, "uarch");
			if (u && o)
				std::printf("barrier, burst on two CPUs, wait=%s: uarch %.2fx the messages/s of %s\n", w,
					    u->rate() / o->rate(), other);
		}
	if (const Row *u = find(Mode::burst, "uarch", "uarch", "uarch"), *s = find(Mode::burst, "uarch", "spin", "uarch");
	    u && s)
		std::printf("wait, burst: uarch %.2fx the messages/s of spin; consumer CPU %.0f%% vs %.0f%%\n",
			    u->rate() / s->rate(), 100 * u->med([](const Result &x) { return x.cons_cpu; }),
			    100 * s->med([](const Result &x) { return x.cons_cpu; }));
	if (const Row *u = find(Mode::burst, "uarch", "uarch", "uarch"), *f = find(Mode::burst, "uarch", "futex", "uarch");
	    u && f)
		std::printf("wait, burst: uarch %.2fx the messages/s of futex-only\n", u->rate() / f->rate());
	if (const Row *u = find(Mode::burst, "uarch", "uarch", "uarch"), *e = find(Mode::burst, "uarch", "eager", "uarch");
	    u && e)
		std::printf("wait, burst: uarch (batching poll) %.2fx the messages/s of eager (first slot ends the poll)\n",
			    u->rate() / e->rate());
	for (uint32_t pause : pauses) {
		std::string line;
		for (const char *w : {"uarch", "eager", "futex", "spin"})
			if (const Row *t = find(Mode::trickle, "uarch", w, "uarch", pause)) {
				char buf[96];
				std::snprintf(buf, sizeof buf, "%s%s %.0f%%", line.empty() ? "" : ", ", w,
					      100 * t->med([](const Result &x) { return x.cons_cpu; }));
				line += buf;
			}
		if (!line.empty())
			std::printf("wait, trickle %u us: consumer CPU share %s\n", pause, line.c_str());
	}
	if (const Row *u = find(Mode::burst, "uarch", "uarch", "uarch"), *l = find(Mode::burst, "uarch", "uarch", "libc");
	    u && l)
		std::printf("copy, burst, %u B: uarch_memcpy %.2fx the messages/s of the C library's memcpy\n", base.size,
			    u->rate() / l->rate());
	if (errors) {
		std::printf("ERRORS: %" PRIu64 " messages arrived wrong\n", errors);
		return 1;
	}
	return 0;
}
