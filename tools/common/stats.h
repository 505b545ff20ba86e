// What the measuring tools share: the thread's CPU time and quantiles.
#pragma once
#include <time.h>
#include <algorithm>
#include <utility>
#include <vector>

namespace uarch::tools {

// This thread's CPU time in ns: descheduling by other load does not count.
inline double thread_ns()
{
	timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return double(t.tv_sec) * 1e9 + double(t.tv_nsec);
}

// The p-quantile of v (0 <= p <= 1), interpolated between the nearest
// two; 0 when v is empty.
inline double quantile(std::vector<double> v, double p)
{
	std::sort(v.begin(), v.end());
	if (v.empty())
		return 0;
	double x = p * double(v.size() - 1);
	size_t k = std::min(size_t(x), v.size() - 1);
	return k + 1 < v.size() ? v[k] + (x - double(k)) * (v[k + 1] - v[k]) : v[k];
}

// The median of v (the mean of the middle two for an even count).
inline double median(std::vector<double> v) { return quantile(std::move(v), 0.5); }

// A 95% interval of the median of v from its order statistics (no
// assumption on the distribution): the values ranked n/2 -/+ 0.98 sqrt(n),
// 1-based; v's extremes where n is too small for that (n <= 10).
inline std::pair<double, double> median_interval(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	if (v.empty())
		return {0, 0};
	double n = double(v.size()), half = 0.98 * __builtin_sqrt(n);
	size_t lo = size_t(std::max(1.0, __builtin_floor(n / 2 - half)));
	size_t hi = size_t(std::min(n, __builtin_ceil(n / 2 + 1 + half)));
	return {v[lo - 1], v[hi - 1]};
}

} // namespace uarch::tools
