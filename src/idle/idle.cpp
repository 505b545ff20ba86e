// Placeholder policy: futex only, with a waiter count so that a wake with
// no sleeper makes no system call.
#include "idle/idle.h"
#include "dispatch/sys.h"
#include <errno.h>
#include <limits.h>
#include <time.h>

namespace uarch {

namespace {
constexpr long futex_wait_bitset_private = 9 | 128, futex_wake_private = 1 | 128;
constexpr unsigned nbuckets = 256;
// Sleepers per hash bucket of the address.
uint32_t sleepers[nbuckets];

unsigned bucket(const void *a) { return (uintptr_t(a) >> 2) * 2654435761u % nbuckets; }

int64_t now_ns()
{
	timespec ts;
	sys::call6(sys::nr_clock_gettime, CLOCK_MONOTONIC, long(&ts));
	return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
} // namespace

int idle_wait(const uint32_t *addr, uint32_t expected, int64_t timeout_ns, const IdlePolicy &)
{
	if (!addr || (uintptr_t(addr) & 3))
		return EINVAL;
	if (__atomic_load_n(addr, __ATOMIC_ACQUIRE) != expected)
		return 0;
	timespec deadline, *dl = nullptr;
	if (timeout_ns >= 0) {
		int64_t t = now_ns() + timeout_ns;
		deadline.tv_sec = t / 1000000000;
		deadline.tv_nsec = t % 1000000000;
		dl = &deadline;
	}
	uint32_t *cnt = &sleepers[bucket(addr)];
	__atomic_fetch_add(cnt, 1, __ATOMIC_SEQ_CST);
	long r = sys::call6(sys::nr_futex, long(addr), futex_wait_bitset_private, long(expected), long(dl), 0,
			    long(~0u));
	__atomic_fetch_sub(cnt, 1, __ATOMIC_RELAXED);
	if (r == -ETIMEDOUT)
		return __atomic_load_n(addr, __ATOMIC_ACQUIRE) != expected ? 0 : ETIMEDOUT;
	return 0;
}

int idle_wake(uint32_t *addr, int count)
{
	if (!addr || (uintptr_t(addr) & 3))
		return 0;
	// Orders the caller's store before the sleeper-count load (the waiter
	// does the mirror image: count increment, then the futex re-check).
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&sleepers[bucket(addr)], __ATOMIC_RELAXED) == 0)
		return 0;
	long r = sys::call6(sys::nr_futex, long(addr), futex_wake_private, count < 0 ? INT_MAX : count);
	return r > 0 ? int(r) : 0;
}

} // namespace uarch
