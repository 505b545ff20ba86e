// What the measuring tools share: the thread's CPU time and a median.
#pragma once
#include <time.h>
#include <algorithm>
#include <vector>

namespace uarch::tools {

// This thread's CPU time in ns: descheduling by other load does not count.
inline double thread_ns()
{
	timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return double(t.tv_sec) * 1e9 + double(t.tv_nsec);
}

// The median of v (the mean of the middle two for an even count); 0 when
// v is empty.
inline double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	size_t n = v.size();
	return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

} // namespace uarch::tools
