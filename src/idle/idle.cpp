// The idle wait: the policy's stages in order (spin, then a monitor/wait
// instruction, then the futex), each bounded by its budget and by the
// caller's timeout; the futex stage, last, sleeps until a wake or the
// deadline. Every stage re-checks the word before it waits, and the futex
// stage counts its sleepers, so a wake-up is never lost and a wake with no
// sleeper makes no system call.
#include "idle/idle.h"
#include "idle/budget.h"
#include "idle/stages.h"
#include "sys/sys.h"
#include <errno.h>
#include <limits.h>
#include <time.h>
#pragma weak clock_gettime
#define UARCH_BUILDING_LIBRARY 1
#include "uarch.h"

namespace uarch {

using namespace idle;

namespace {

// FUTEX_WAIT_BITSET and FUTEX_WAKE; | 128 (FUTEX_PRIVATE_FLAG) keys the
// futex by this process, which is cheaper (no page lookup) but never meets
// a waiter or waker in another process.
constexpr long futex_wait_bitset = 9, futex_wake = 1, futex_private = 128;
constexpr long futex_bitset_match_any = 0xffffffff;
constexpr uint64_t no_deadline = ~uint64_t(0);
// A policy that never sleeps yields the CPU this often (see idle_wait).
constexpr uint64_t spin_yield_ns = 50000;
// The shortest sleep the futex stage takes: the kernel lets a sleeping
// thread's timer fire up to its timer slack late (50 us by default), so
// a shorter sleep would overshoot the caller's deadline by more than it
// sleeps. A wait that reaches the futex stage with less than this left
// waits it out awake instead (run_policy), where the policy waits awake
// at all (a futex-only policy, as on a one-CPU process whose storer may
// need this CPU, or one whose stages before the futex have no budget,
// always sleeps). Zen 4 guest, uarch_idle_wait timeouts with nothing
// stored, late by (median of 21): 5 us 77 us, 20 us 80 us, 1 ms 83 us
// when they slept (15 us, 20 us, 22 us with the slack set to 1 ns: the
// rest is the guest's wake-up); 0.3 us, 0.8 us, 71 us with this bound.
constexpr uint64_t shortest_sleep_ns = 50000;

// Sleepers in the futex stage per hash bucket of the address, one cache
// line each so that waiters on different words do not share a line.
constexpr unsigned bucket_bits = 8;
struct alignas(64) Bucket {
	uint32_t sleepers;
};
Bucket g_buckets[1u << bucket_bits];

struct alignas(64) Counters {
	uint64_t futex_waits, futex_wakes;
};
Counters g_counters;

uint32_t *sleepers_of(const void *a)
{
	// Fibonacci hashing of the word index: neighbouring words spread.
	uint64_t h = (uint64_t(uintptr_t(a)) >> 2) * 0x9e3779b97f4a7c15ull;
	return &g_buckets[h >> (64 - bucket_bits)].sleepers;
}

// The learnt spin budgets (src/idle/budget.h), one 8-byte entry per hash
// bucket of the waiting address: budget_ns in bits 0-31, since_probe in
// 32-39, bit 40 set once known, the address's 16-bit tag in 48-63 (another
// address in the bucket reads as unknown and starts at the cap). Entries are
// read and written whole with relaxed atomics and no lock: two waits on one
// bucket that finish together keep one of their updates, which only delays
// the learning by a wait.
constexpr unsigned learn_bits = 8;
uint64_t g_learnt[1u << learn_bits];

struct LearnSlot {
	uint64_t *entry;
	uint16_t tag;
};

LearnSlot learn_slot(const void *a)
{
	uint64_t h = (uint64_t(uintptr_t(a)) >> 2) * 0x9e3779b97f4a7c15ull;
	return LearnSlot{&g_learnt[h >> (64 - learn_bits)], uint16_t(h >> (64 - learn_bits - 16))};
}

SpinState unpack(uint64_t e, uint16_t tag)
{
	if (!(e >> 40 & 1) || uint16_t(e >> 48) != tag)
		return SpinState{0, 0, false};
	return SpinState{uint32_t(e), uint8_t(e >> 32), true};
}

uint64_t pack(SpinState s, uint16_t tag)
{
	return uint64_t(s.budget_ns) | uint64_t(s.since_probe) << 32 | uint64_t(s.known) << 40 | uint64_t(tag) << 48;
}

uint32_t load(const uint32_t *a) { return __atomic_load_n(a, __ATOMIC_ACQUIRE); }

uint64_t add_sat(uint64_t a, uint64_t b) { return a + b < a ? no_deadline : a + b; }

// A full barrier: the library's own smp_mb variant (seed 003's locked add
// on x86-64, dmb ish on arm64), not another copy of its asm.
inline void full_fence() { arch::full_fence(); }

void bump(uint64_t *c) { __atomic_fetch_add(c, 1, __ATOMIC_RELAXED); }


// Runs one non-futex stage until it sees a change or `deadline` passes.
int run_stage(Stage s, const uint32_t *addr, uint32_t expected, uint64_t deadline, bool c01)
{
	return stage_of_arch(s, addr, expected, deadline, c01);
}

// The caller's deadline in CLOCK_MONOTONIC, for a wait that began at
// idle-clock time `start`: now, plus the timeout, less the time waited so
// far as the idle clock measured it. The idle clock is read before the
// monotonic one, and the time waited is shortened by 1/32 and by one step
// of the clock, so that neither the order of the reads, nor an estimated
// frequency (off by far less than 3%), nor a start read just before the
// clock moved can move the deadline earlier than start + timeout. It may
// move it later by 1/32 of the time spent in the stages before the futex,
// plus a step.
int64_t mono_deadline(uint64_t start, int64_t timeout_ns)
{
	uint64_t t = clock_now();
	int64_t now = mono_now_ns();
	uint64_t waited = t > start ? ns_from_ticks(t - start) : 0;
	const uint64_t step = clock_step_ns();
	waited -= waited / 32;
	waited = waited > step ? waited - step : 0;
	if (waited >= uint64_t(timeout_ns))
		return now;
	int64_t left = timeout_ns - int64_t(waited);
	return now > INT64_MAX - left ? INT64_MAX : now + left;
}

} // namespace

namespace idle {

int stage_spin(const uint32_t *addr, uint32_t expected, uint64_t deadline)
{
	for (;;) {
		if (load(addr) != expected)
			return 0;
		if (clock_now() >= deadline)
			return ETIMEDOUT;
		cpu_relax();
	}
}

int stage_futex_on(const uint32_t *addr, uint32_t expected, int64_t mono_deadline_ns, uint32_t *sleepers,
		   bool shared)
{
	timespec ts, *tp = nullptr;
	if (mono_deadline_ns >= 0) {
		ts.tv_sec = mono_deadline_ns / 1000000000;
		ts.tv_nsec = mono_deadline_ns % 1000000000;
		tp = &ts;
	}
	// Announce the sleeper, then let the kernel compare the word. With the
	// full barrier in idle_wake this is Dekker's pattern:
	//   waiter: sleepers++ (a full barrier)  then  the kernel reads *addr
	//   waker:  the caller stores *addr, full barrier,  then  reads sleepers
	// Both sides order a store before a load with a full barrier, so they
	// cannot both read the old value: either the waker sees sleepers > 0
	// and calls FUTEX_WAKE, or the kernel sees the new word and does not
	// sleep. When the waker calls FUTEX_WAKE before this thread is queued,
	// its store already happened, and FUTEX_WAIT's own check (made under the
	// futex hash-bucket lock, which FUTEX_WAKE also takes) sees it. The
	// same holds across processes: the counter is then in the caller's
	// shared memory next to the word, and the futex is keyed by the page.
	__atomic_fetch_add(sleepers, 1, __ATOMIC_SEQ_CST);   // x86-64: lock xadd, a full barrier
	arch::fence_after_rmw();                             // arm64 LDADDAL orders less
	const long op = futex_wait_bitset | (shared ? 0 : futex_private);
	int ret;
	for (;;) {
		bump(&g_counters.futex_waits);
		long r = sys::call6(sys::nr_futex, long(addr), op, long(expected), long(tp), 0, futex_bitset_match_any);
		if (r == -EINTR) {
			// A signal: keep waiting to the same absolute deadline.
			if (load(addr) != expected) {
				ret = 0;
				break;
			}
			continue;
		}
		// 0: woken (or a spurious wake); -EAGAIN: the word already
		// differed. Any other error (EFAULT, ENOSYS) is reported as a
		// wake too: the caller re-checks its condition.
		ret = r == -ETIMEDOUT && load(addr) == expected ? ETIMEDOUT : 0;
		break;
	}
	// Relaxed: a waker that still sees this sleeper makes one needless
	// FUTEX_WAKE, nothing worse.
	__atomic_fetch_sub(sleepers, 1, __ATOMIC_RELAXED);
	return ret;
}

int stage_futex(const uint32_t *addr, uint32_t expected, int64_t mono_deadline_ns)
{
	return stage_futex_on(addr, expected, mono_deadline_ns, sleepers_of(addr), false);
}

Stats stats()
{
	return Stats{__atomic_load_n(&g_counters.futex_waits, __ATOMIC_RELAXED),
		     __atomic_load_n(&g_counters.futex_wakes, __ATOMIC_RELAXED)};
}

uint32_t sleepers(const uint32_t *addr)
{
	return __atomic_load_n(sleepers_of(addr), __ATOMIC_RELAXED);
}

SpinState learnt(const uint32_t *addr)
{
	LearnSlot l = learn_slot(addr);
	return unpack(__atomic_load_n(l.entry, __ATOMIC_RELAXED), l.tag);
}

unsigned learn_bucket(const uint32_t *addr)
{
	return unsigned(learn_slot(addr).entry - g_learnt);
}

void forget_learnt()
{
	for (uint64_t &e : g_learnt)
		__atomic_store_n(&e, 0, __ATOMIC_RELAXED);
}

} // namespace idle

namespace {

// Where a futex sleeper is counted and how the futex is keyed.
struct Sleep {
	uint32_t *sleepers;
	bool shared;
};

// The policy's stages after the first check; start: the idle clock when
// the wait began; spin_ns: this wait's spin budget.
// *in_spin: set when the spin stage saw the change (so within spin_ns).
int run_policy(const uint32_t *addr, uint32_t expected, int64_t timeout_ns, uint64_t start, const IdlePolicy &p,
	       uint32_t spin_ns, Sleep sl, bool *in_spin)
{
	uint64_t end = timeout_ns < 0 ? no_deadline : add_sat(start, ticks_from_ns(uint64_t(timeout_ns)));
	uint32_t nstages = p.nstages <= 4 ? p.nstages : 4;
	bool futex = nstages == 0;   // no stages at all: the futex alone
	// A stage before the futex with a budget the policy gives it (not
	// one learnt: a spin learnt down to 0 still may wait out a near
	// deadline): the policy waits awake, and a deadline too near to sleep
	// for is waited in `near`, the last such stage, or a spin for WFE,
	// whose wake-up without a store is the 100 us event stream.
	bool awake = false;
	Stage last = Stage::spin, near = Stage::spin;
	for (uint32_t i = 0; i < nstages; i++)
		futex |= p.stages[i] == Stage::futex;
	for (uint32_t i = 0; i < nstages && p.stages[i] != Stage::futex; i++) {
		Stage s = last = p.stages[i];
		if ((s == Stage::spin ? p.spin_ns : p.monitor_ns) > 0) {
			awake = true;
			near = s == Stage::wfe ? Stage::spin : s;
		}
		if (!futex && i + 1 == nstages)
			break;   // the last stage of a policy that never sleeps: below
		uint64_t budget = s == Stage::spin ? spin_ns : p.monitor_ns;
		if (budget == 0)
			continue;
		uint64_t dl = add_sat(clock_now(), ticks_from_ns(budget));
		dl = dl < end ? dl : end;
		if (run_stage(s, addr, expected, dl, p.umwait_c01) == 0) {
			*in_spin = s == Stage::spin;
			return 0;
		}
		if (dl == end && end != no_deadline)
			break;   // the caller's time is up, as the idle clock says
	}
	if (futex) {
		if (!awake || end == no_deadline || clock_now() + ticks_from_ns(shortest_sleep_ns) < end)
			return stage_futex_on(addr, expected, timeout_ns < 0 ? -1 : mono_deadline(start, timeout_ns),
					      sl.sleepers, sl.shared);
		last = near;
	}
	// A policy without a futex stage (a pure spin), or a deadline too near
	// to sleep for: the last stage runs
	// until the word changes or the time is up, in slices with a
	// sched_yield between them, so that on an oversubscribed machine the
	// thread that will store gets the CPU (else each handoff costs a whole
	// scheduler time slice). The idle clock's deadline is confirmed
	// against CLOCK_MONOTONIC before ETIMEDOUT.
	int64_t dl = -1;
	for (;;) {
		uint64_t now = clock_now(), t = add_sat(now, ticks_from_ns(spin_yield_ns));
		if (end != no_deadline) {
			if (now >= end) {
				if (dl < 0)
					dl = mono_deadline(start, timeout_ns);
				int64_t m = mono_now_ns();
				if (m >= dl)
					return load(addr) != expected ? 0 : ETIMEDOUT;
				end = add_sat(now, ticks_from_ns(uint64_t(dl - m)));
			}
			t = t < end ? t : end;
		}
		if (run_stage(last, addr, expected, t, p.umwait_c01) == 0)
			return 0;
		if (t != end)
			sys::call6(sys::nr_sched_yield);
	}
}

// Whether the policy spins before it sleeps: only then is there a budget
// to learn (a pure spin never sleeps, a futex-only policy never spins).
bool learns(const IdlePolicy &p)
{
	uint32_t nstages = p.nstages <= 4 ? p.nstages : 4;
	bool spin = false;
	for (uint32_t i = 0; i < nstages; i++) {
		if (p.stages[i] == Stage::futex)
			return spin && p.spin_ns > 0;
		spin |= p.stages[i] == Stage::spin;
	}
	return false;
}

int wait_on(const uint32_t *addr, uint32_t expected, int64_t timeout_ns, const IdlePolicy &p, Sleep sl,
	    bool learn = true)
{
	if (load(addr) != expected)
		return 0;
	if (timeout_ns == 0)
		return ETIMEDOUT;
	uint64_t start = clock_now();
	bool in_spin = false;
	if (!learn || !learns(p))
		return run_policy(addr, expected, timeout_ns, start, p, p.spin_ns, sl, &in_spin);
	LearnSlot l = learn_slot(addr);
	uint64_t old = __atomic_load_n(l.entry, __ATOMIC_RELAXED);
	SpinState s = unpack(old, l.tag);
	SpinPlan plan = spin_plan(s, p.spin_ns);
	int r = run_policy(addr, expected, timeout_ns, start, p, plan.spin_ns, sl, &in_spin);
	// Caught by a spin of the learnt budget: t <= b, which keeps b; no
	// need to read the clock (the short handoff is the path that feels
	// every nanosecond after the change was seen).
	uint64_t t = 0;
	if (!in_spin || plan.probe) {
		uint64_t now = clock_now();
		t = now > start ? ns_from_ticks(now - start) : 0;
	}
	WaitOutcome o{t, r == ETIMEDOUT};
	uint64_t e = pack(spin_learn(s, plan, o, p.spin_ns), l.tag);
	if (e != old)   // a wait that changes nothing dirties no line
		__atomic_store_n(l.entry, e, __ATOMIC_RELAXED);
	return r;
}

int wake_on(uint32_t *addr, int count, const uint32_t *sleepers, bool shared)
{
	// The waker's half of the Dekker pattern in stage_futex_on: the
	// caller's store to *addr, then this full barrier, then the sleeper
	// count. A waiter still in a spin or monitor stage needs nothing: it
	// sees the store itself.
	full_fence();
	if (__atomic_load_n(sleepers, __ATOMIC_RELAXED) == 0)
		return 0;
	bump(&g_counters.futex_wakes);
	long r = sys::call6(sys::nr_futex, long(addr), futex_wake | (shared ? 0 : futex_private),
			    count < 0 ? INT_MAX : count);
	return r > 0 ? int(r) : 0;
}

bool bad_shared(const uarch_idle_word *w) { return !w || (uintptr_t(w) & 7); }

} // namespace

int idle_wait(const uint32_t *addr, uint32_t expected, int64_t timeout_ns, const IdlePolicy &p)
{
	if (!addr || (uintptr_t(addr) & 3))
		return EINVAL;
	return wait_on(addr, expected, timeout_ns, p, Sleep{sleepers_of(addr), false});
}

int idle::wait_fixed_budget(const uint32_t *addr, uint32_t expected, int64_t timeout_ns, const IdlePolicy &p)
{
	if (!addr || (uintptr_t(addr) & 3))
		return EINVAL;
	return wait_on(addr, expected, timeout_ns, p, Sleep{sleepers_of(addr), false}, false);
}

int idle_wake(uint32_t *addr, int count)
{
	if (!addr || (uintptr_t(addr) & 3))
		return -EINVAL;
	if (count == 0)
		return 0;
	return wake_on(addr, count, sleepers_of(addr), false);
}

int idle_wait_shared(uarch_idle_word *w, uint32_t expected, int64_t timeout_ns, const IdlePolicy &p)
{
	if (bad_shared(w))
		return EINVAL;
	return wait_on(&w->value, expected, timeout_ns, p, Sleep{&w->sleepers, true});
}

int idle_wake_shared(uarch_idle_word *w, int count)
{
	if (bad_shared(w))
		return -EINVAL;
	if (count == 0)
		return 0;
	return wake_on(&w->value, count, &w->sleepers, true);
}

} // namespace uarch
