// Paired rounds (paired.h).
#include "paired.h"
#include <algorithm>
#include <cmath>
#include "common/stats.h"

namespace paired {

using uarch::tools::median;
using uarch::tools::thread_ns;

Result run(size_t sides, size_t calls, const std::function<void(size_t)> &batch, int rounds, double budget_ns,
	   bool use_min)
{
	constexpr double min_sample_ns = 2e5, warm_ns = 1e6;
	auto sample = [&](size_t side, size_t reps) {
		double t0 = thread_ns();
		for (size_t r = 0; r < reps; r++)
			batch(side);
		return thread_ns() - t0;
	};
	// t[j]: side j's samples; z[j]: side 0's, each the one that followed
	// t[j]'s sample of the same index.
	std::vector<std::vector<double>> t(sides), z(sides);
	Result res;
	for (size_t j = 1; j < sides; j++) {
		// Warm-up: the pair's batches in turn for at least 1 ms, then
		// one more of each, timed, which sizes the run: every sample of
		// the pair the same number of batches, set by the slower side.
		double tj = 0, t0 = 0, spent = 0;
		do {
			spent += sample(j, 1) + sample(0, 1);
		} while (spent < warm_ns);
		tj = sample(j, 1);
		t0 = sample(0, 1);
		size_t reps = size_t(std::ceil(min_sample_ns / std::max(std::max(tj, t0), 1.0)));
		reps = std::max<size_t>(1, std::min<size_t>(reps, 1 << 16));
		double share = budget_ns / double(sides - 1);
		size_t n = rounds > 0 ? size_t(rounds)
				      : size_t(std::clamp(share / std::max((tj + t0) * double(reps), 1.0), 5.0, 201.0));
		if (j == 1)
			res.rounds = n;
		const double per = double(reps * calls);
		for (size_t i = 0; i < n; i++) {
			t[j].push_back(sample(j, reps) / per);
			z[j].push_back(sample(0, reps) / per);
		}
	}
	auto lowest = [](const std::vector<double> &v) { return *std::min_element(v.begin(), v.end()); };
	// Side 0's time: from its run against side 1.
	res.ns.push_back(use_min ? lowest(z[1]) : median(z[1]));
	res.ratio.push_back(1);
	for (size_t j = 1; j < sides; j++) {
		if (use_min) {
			res.ns.push_back(lowest(t[j]));
			res.ratio.push_back(lowest(z[j]) / res.ns[j]);
		} else {
			std::vector<double> q;
			for (size_t i = 0; i < t[j].size(); i++)
				q.push_back(z[j][i] / t[j][i]);
			res.ns.push_back(median(t[j]));
			res.ratio.push_back(median(q));
		}
	}
	return res;
}

} // namespace paired
