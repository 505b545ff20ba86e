// Paired rounds: how uarch-bench mem times the sides of a case (side 0,
// the C library, against uarch, and against others) on a shared, drifting
// machine. Each other side j is compared with side 0 in a run of rounds of
// its own: a sample of side j, then one of side 0, repeated, so that no
// sample follows one of its own side or of a third. A sample is the case's
// batch of calls repeated (a fixed size's batch is 1024 calls, a random
// mix's 64 Ki) until it takes about 200 us, so that the clock's cost is
// lost in it. A side's time is its median over its rounds (side 0's: over
// those against side 1; --min: the fastest), and its ratio the median
// over the rounds of side 0's time / its time in the same round (--min:
// the fastest of each in that pair's rounds), so a change in the machine's
// load, which moves the two samples of a round alike, cancels. Before
// each pair's rounds the two sides run in turn for 1 ms to warm caches
// and predictors, and one more batch of each, timed, sets how many batches
// make a sample and how many rounds fit the budget. Time is the thread's
// CPU time: descheduling by other load does not count.
//
// What a sample follows matters. On the Zen 4 guest (family 0x19 model
// 0x11), uarch's avx512 memcpy on the fleet mix (uarch-bench mem's
// "fleet") took 4.1-4.6 ns a call where each sample followed one of its
// own, 5.3-6.1 ns where it followed one of glibc's, and 3.8 ns run 5 times
// back to back (each side as its own benchmark, as uarch-bench mem did
// before, came out near the last): the fleet ratio is about 1.8x this way,
// 2.4x that way. A program runs other code between its copies, so no
// sample here follows one of its own side. Nor of a third side: with every side in one cycle
// (uarch, glibc, each variant, glibc, ...), uarch's memset ratio on the
// node, python-bytes and python-json replays came out 0.91-0.95, 2-4%
// below the avx512 variant's, the same code called by name, and 3-8% below
// the same replays in a run of uarch and glibc alone (0.99).
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <functional>
#include <vector>

namespace paired {

// One batch of calls, a function of its own: its loop keeps the pointers
// it reads in registers across the calls (a lambda capturing them by
// reference reloads each from its closure after every call, time that
// both sides pay and that pulls every ratio toward 1). Offsets: from d,
// and from s (copies).
template <class Off>
__attribute__((noinline)) void copy_batch(void *(*f)(void *, const void *, size_t), char *d, const char *s,
					  const uint32_t *size, const Off *doff, const Off *soff, size_t calls)
{
	for (size_t i = 0; i < calls; i++)
		f(d + doff[i], s + soff[i], size[i]);
	__asm__ volatile("" : : : "memory");
}

// Fills with the byte (i + fill) for call i.
template <class Off>
__attribute__((noinline)) void set_batch(void *(*f)(void *, int, size_t), char *d, const uint32_t *size,
					 const Off *doff, size_t calls, int fill)
{
	for (size_t i = 0; i < calls; i++)
		f(d + doff[i], int(i) + fill, size[i]);
	__asm__ volatile("" : : : "memory");
}

// The tables' name for what run() reports, as use_min chooses.
inline const char *statistic(bool use_min)
{
	return use_min ? "fastest of the paired rounds" : "median of the paired rounds";
}

struct Result {
	std::vector<double> ns;      // per side: ns per call
	std::vector<double> ratio;   // per side: side 0's time / its time (1 for side 0)
	size_t rounds = 0;           // in the run against side 1
};

// batch(side) makes `calls` calls on side. rounds: that many a side, or 0
// for as many as fit budget_ns (all sides together), at least 5 and at
// most 201.
Result run(size_t sides, size_t calls, const std::function<void(size_t)> &batch, int rounds, double budget_ns,
	   bool use_min);

} // namespace paired
