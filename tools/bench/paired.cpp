// Paired rounds (paired.h).
#include "paired.h"
#include <time.h>
#include <algorithm>
#include <cmath>

namespace paired {
namespace {

double thread_ns()
{
	timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return double(t.tv_sec) * 1e9 + double(t.tv_nsec);
}

double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	size_t n = v.size();
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

} // namespace

Result run(size_t sides, size_t calls, const std::function<void(size_t)> &batch, int rounds, double budget_ns,
	   bool use_min)
{
	constexpr double min_sample_ns = 2e5;
	auto sample = [&](size_t side, size_t reps) {
		double t0 = thread_ns();
		for (size_t r = 0; r < reps; r++)
			batch(side);
		return thread_ns() - t0;
	};
	// t[j]: side j's samples (side 0: those after side 1); q[j]: the
	// sample of side 0 that followed side j's / side j's.
	std::vector<std::vector<double>> t(sides), q(sides);
	size_t n = 0;
	for (size_t j = 1; j < sides; j++) {
		// The pair's warm-up round, one batch a sample; every sample of
		// the pair the same number of batches, set by the slower side.
		double tj = sample(j, 1), t0 = sample(0, 1);
		size_t reps = size_t(std::ceil(min_sample_ns / std::max(std::max(tj, t0), 1.0)));
		reps = std::max<size_t>(1, std::min<size_t>(reps, 1 << 16));
		double share = budget_ns / double(sides - 1);
		n = rounds > 0 ? size_t(rounds)
			       : size_t(std::clamp(share / std::max((tj + t0) * double(reps), 1.0), 5.0, 201.0));
		const double per = double(reps * calls);
		for (size_t i = 0; i < n; i++) {
			tj = sample(j, reps) / per;
			t0 = sample(0, reps) / per;
			t[j].push_back(tj);
			q[j].push_back(t0 / tj);
			if (j == 1)
				t[0].push_back(t0);
		}
	}
	Result res;
	res.rounds = n;   // the last pair's
	res.ns.push_back(use_min ? *std::min_element(t[0].begin(), t[0].end()) : median(t[0]));
	res.ratio.push_back(1);
	for (size_t j = 1; j < sides; j++) {
		if (use_min) {
			res.ns.push_back(*std::min_element(t[j].begin(), t[j].end()));
			res.ratio.push_back(res.ns[0] / res.ns[j]);
		} else {
			res.ns.push_back(median(t[j]));
			res.ratio.push_back(median(q[j]));
		}
	}
	return res;
}

} // namespace paired
