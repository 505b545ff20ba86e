// Paired rounds: how uarch-bench mem times the sides of a case (the C
// library, uarch, and others) against each other on a shared, drifting
// machine. A round runs one sample on every side back to back, the first
// side turning from round to round; a side's time is its median over the
// rounds (--min: its fastest), and its ratio the median over the rounds of
// side 0's time / its time in the same round, so a change in the machine's
// load, which moves the samples of a round alike, cancels. The first round
// warms caches and predictors, sizes the samples (a batch repeated until a
// sample takes at least 200 us, so that the clock's cost is lost in it)
// and is not counted. Time is the thread's CPU time: descheduling by other
// load does not count.
#pragma once
#include <stddef.h>
#include <functional>
#include <vector>

namespace paired {

struct Result {
	std::vector<double> ns;      // per side: ns per call
	std::vector<double> ratio;   // per side: side 0's time / its time (1 for side 0)
	size_t rounds = 0;
};

// batch(side) makes `calls` calls on side. rounds: that many, or 0 for as
// many as fit budget_ns, at least 5 and at most 201.
Result run(size_t sides, size_t calls, const std::function<void(size_t)> &batch, int rounds, double budget_ns,
	   bool use_min);

} // namespace paired
