// A single-producer/single-consumer ring of fixed-size slots, in the style
// of a virtio ring, built on uarch: uarch_memcpy moves the payloads,
// uarch_smp_mb orders the wake-up check, uarch_idle_wait/uarch_idle_wake
// put an idle side to sleep, uarch_prefetch pulls in the next slot.
//
// One thread pushes, one thread pops. Messages are 0..slot_size bytes; each
// slot holds a length word and the payload. Indices run freely as uint32_t
// (slot = index & (capacity - 1)), so capacity is a power of two <= 2^31.
//
// Memory ordering (C++ __atomic builtins, so the same code is right on
// arm64; what each costs on x86-64 in brackets):
//  1. Data handoff. The producer writes the slot, then stores head with
//     release; the consumer loads head with acquire, then reads the slot.
//     The consumer reads the slot, then stores tail with release; the
//     producer loads tail with acquire before it overwrites that slot.
//     [x86 TSO: plain movs; release/acquire only stop the compiler.]
//  2. Going to sleep (the Dekker pattern). A side that finds the ring
//     empty (full) stores its "sleeping" word, runs a full barrier, and
//     loads the other side's index again before it waits. The other side
//     stores its index, runs a full barrier, and loads the sleeping word;
//     if it says "asleep" it sends a wake-up. Each side stores one word and
//     then loads the word the other stores: only a full barrier orders a
//     store before a later load (StoreLoad), on x86 too, where the store
//     may still sit in the store buffer. With both barriers at least one
//     side sees the other's store: the sleeper sees the new index and does
//     not sleep, or the waker sees the sleeping word and wakes it. The wait
//     is on the index word with the index seen as the expected value, so a
//     wake-up sent between the re-check and the sleep is not lost either
//     (the wait returns at once when the word has changed).
//     [x86: uarch_smp_mb, a locked add; this is the one barrier per message
//     and side that seed 003 made cheaper.] A wait may poll the index
//     first (WaitUarch: 16 to 512 pauses, waiting for a batch; see
//     sleep_until) without announcing anything: polling
//     only reads, so it needs no barrier and changes none of this.
//  3. The sleeping word is virtio's event index rather than a boolean: the
//     sleeper stores the index it waits to see move ("wake me when head
//     leaves t"), and the other side wakes it only when its own store moved
//     the index off that value. So a sleeper gets one wake-up, not one per
//     message until it runs again, and nobody has to clear the word (a
//     waker clearing a flag can erase the flag of the sleeper's next sleep
//     and lose that wake-up). A stale value matches again only after 2^32
//     messages: one spurious wake-up, which waits tolerate.
//  4. No other barrier is needed: the payloads and indices need only 1.,
//     and a stale sleeping word costs at most a spurious wake-up.
//  5. close() queues an end-of-stream record like a message, so it is
//     ordered behind the last one by 1. and wakes a sleeper by 2. (A bare
//     "closed" flag plus a wake-up would not do: uarch_idle_wake wakes only
//     a waiter that has reached the futex; one still spinning sees nothing
//     until the word it watches changes, then sleeps through the wake-up.)
//
// The barrier, the wait and the copy are template parameters so that
// ring-bench can swap each for its naive counterpart; the defaults are the
// uarch primitives.
#pragma once

#include <uarch.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

#include <sched.h>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace uarch_ring {

// Full barriers (StoreLoad included).
struct BarrierUarch { // lock addl $0,-132(%rsp) on x86-64, dmb ish on arm64
	static constexpr const char *name = "uarch";
	static void mb() { uarch_smp_mb(); }
};
#if defined(__x86_64__)
struct BarrierMfence { // what the kernel used before seed 003
	static constexpr const char *name = "mfence";
	static void mb() { __asm__ __volatile__("mfence" ::: "memory"); }
};
#endif
struct BarrierSeqCst { // the compiler's choice: gcc 12 lock orq $0,(%rsp), clang 14 mfence
	static constexpr const char *name = "seq_cst";
	static void mb() { std::atomic_thread_fence(std::memory_order_seq_cst); }
};

// Waits on a 32-bit word. wait() may return spuriously; wake() returns the
// number of sleepers the kernel woke; poll: pauses to poll before sleeping.
struct WaitUarch { // a short poll, then uarch_idle_wait: spin, monitor-wait, futex
	static constexpr const char *name = "uarch";
	static constexpr bool sleeps = true;
	// Pauses to poll the index, at most, before announcing the sleep
	// (sleep_until adapts the count between 16 and this): a gap that
	// short costs neither side a store to a shared line nor a barrier, and
	// in a burst it is long enough for a batch to build up (512 pauses:
	// 64 messages of a burst on the Zen 5 guest). Without the poll a burst
	// pays for an announcement at every moment the consumer catches up:
	// 0.63x the messages/s of spinning on Zen 3, 0.97x with 64 pauses.
	static constexpr uint32_t poll = 512;
	static constexpr bool batches = true;
	static void wait(const uint32_t *w, uint32_t v) { uarch_idle_wait(w, v, -1); }
	static int wake(uint32_t *w) { return uarch_idle_wake(w, 1); }
};
// The same wait with the ring's earlier poll: a fixed 64 pauses, ending at
// the first message (slot). Kept to show the batch's effect in one run.
struct WaitUarchEager : WaitUarch {
	static constexpr const char *name = "eager";
	static constexpr uint32_t poll = 64;
	static constexpr bool batches = false;
};
#if defined(__linux__)
struct WaitFutex { // straight into the kernel, a system call for every wake-up
	static constexpr const char *name = "futex";
	static constexpr bool sleeps = true;
	static constexpr uint32_t poll = 0;
	static constexpr bool batches = false;
	static void wait(const uint32_t *w, uint32_t v)
	{
		syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, v, nullptr, nullptr, 0);
	}
	static int wake(uint32_t *w)
	{
		long r = syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
		return r > 0 ? int(r) : 0;
	}
};
#endif
struct WaitSpin { // never sleeps: burns the CPU while idle, never needs a wake-up
	// (Ring's spin loop yields now and then; see sleep_until)
	static constexpr const char *name = "spin";
	static constexpr bool sleeps = false;
	static constexpr uint32_t poll = 0;
	static constexpr bool batches = false;
	static void wait(const uint32_t *, uint32_t) {}
	static int wake(uint32_t *) { return 0; }
};

// Payload copies.
struct CopyUarch {
	static constexpr const char *name = "uarch";
	static void copy(void *d, const void *s, size_t n) { uarch_memcpy(d, s, n); }
};
// The C library's memcpy, called through a volatile pointer so that the
// compiler cannot inline or specialise it for a known size.
inline void *(*volatile libc_memcpy)(void *, const void *, size_t) = std::memcpy;
struct CopyLibc {
	static constexpr const char *name = "libc";
	static void copy(void *d, const void *s, size_t n) { libc_memcpy(d, s, n); }
};

// Counted by each side for itself; read them from that side's thread or
// after it has been joined.
struct SideStats {
	uint64_t notifies = 0; // wake-ups sent (the other side slept at the index we moved)
	uint64_t woken = 0;    // of those, sleepers the kernel actually woke
	uint64_t waits = 0;    // times this side went into Wait::wait
	uint64_t blocked = 0;  // times this side found the ring empty (full) and had to wait
};

template <class Barrier = BarrierUarch, class Wait = WaitUarch, class Copy = CopyUarch>
class Ring {
public:
	using barrier_type = Barrier;
	using wait_type = Wait;
	using copy_type = Copy;

	// capacity: a power of two, 1..2^31. slot_size: the largest message,
	// 1..2^30 bytes. first_index: where the free-running indices start
	// (tests start near 2^32 to cross the wrap).
	Ring(uint32_t capacity, uint32_t slot_size, uint32_t first_index = 0)
	{
		if (capacity == 0 || (capacity & (capacity - 1)) || capacity > (1u << 31))
			throw std::invalid_argument("uarch_ring: capacity must be a power of two <= 2^31");
		if (slot_size == 0 || slot_size > (1u << 30))
			throw std::invalid_argument("uarch_ring: slot_size must be 1..2^30");
		mask_ = capacity - 1;
		batch_ = capacity / 4 < max_batch ? (capacity / 4 ? capacity / 4 : 1) : max_batch;
		slot_size_ = slot_size;
		stride_ = (size_t(slot_size) + header + line - 1) / line * line;
		slots_ = static_cast<char *>(std::aligned_alloc(line, stride_ * capacity));
		if (!slots_)
			throw std::bad_alloc();
		std::memset(slots_, 0, stride_ * capacity);
		head_.v = tail_.v = first_index;
		// Nobody sleeps: values the indices reach only after 2^32 moves.
		cons_event_.v = prod_event_.v = first_index - 1;
		prod_.head = prod_.tail_cache = first_index;
		cons_.tail = cons_.head_cache = first_index;
	}
	~Ring() { std::free(slots_); }
	Ring(const Ring &) = delete;
	Ring &operator=(const Ring &) = delete;

	uint32_t capacity() const { return mask_ + 1; }
	uint32_t slot_size() const { return slot_size_; }

	// Producer side. push() waits while the ring is full; try_push() returns
	// EAGAIN instead. Both return 0, EMSGSIZE (len > slot_size) or EPIPE
	// (after close()).
	int push(const void *p, uint32_t len) { return len > slot_size_ ? EMSGSIZE : put(p, len, true); }
	int try_push(const void *p, uint32_t len) { return len > slot_size_ ? EMSGSIZE : put(p, len, false); }

	// Producer side: no more messages. Queues an end-of-stream record behind
	// them (waiting, as push() does, while the ring is full): the consumer
	// drains what is queued, then pop() returns -EPIPE. Returns 0, or EPIPE
	// when already closed.
	int close() { return put(nullptr, eof, true); }

	// Consumer side. pop() waits while the ring is empty; try_pop() returns
	// -EAGAIN instead. Both return the message length, -EMSGSIZE (cap is
	// smaller than the message, which stays queued) or -EPIPE (closed and
	// drained).
	long pop(void *buf, uint32_t cap) { return get(buf, cap, true); }
	long try_pop(void *buf, uint32_t cap) { return get(buf, cap, false); }

	const SideStats &producer_stats() const { return prod_.stats; }
	const SideStats &consumer_stats() const { return cons_.stats; }

private:
	// 128 bytes: x86 L2 prefetchers fetch lines in pairs, so two lines
	// apart is what keeps the two sides from sharing one.
	static constexpr size_t line = 128;
	static constexpr size_t header = 8; // uint32_t length, 4 bytes unused
	static constexpr uint32_t eof = ~0u; // the length of the end-of-stream record
	// The batch a polling side waits for (at most a quarter of the ring),
	// and the fewest pauses it polls.
	static constexpr uint32_t max_batch = 64, min_poll = 16;

	char *slot(uint32_t i) const { return slots_ + size_t(i & mask_) * stride_; }

	// We moved *word off `from`: wake the other side if it sleeps waiting
	// for that. Its event word is loaded after our index store and a full
	// barrier (2. above).
	void notify(uint32_t *word, const uint32_t *event, uint32_t from, auto &side)
	{
		Barrier::mb();
		if (__atomic_load_n(event, __ATOMIC_RELAXED) == from) {
			side.stats.notifies++;
			side.stats.woken += Wait::wake(word);
		}
	}

	// Waits until avail() (messages to read, or free slots to write; it
	// re-reads the other side's index) is at least 1. A sleeping Wait
	// first polls for up to `poll` pauses, reading the index less often as
	// it goes (every 1, 2, 4, ... 16 pauses), and returns early only once
	// a batch (batch_) is there: the side that caught up lets the other
	// run ahead instead of trailing it by a slot or two, each slot a cache
	// miss on a line the other side has just written (see "Bursts" in
	// README.md). `poll` adapts: it doubles (up to Wait::poll) when the
	// poll ended the wait, and halves (down to min_poll) when the side had
	// to sleep, so a trickle polls briefly and a burst long enough for a
	// batch. Then the side publishes `from` in *event ("wake me when *word
	// leaves from"), re-checks after a full barrier, and waits on
	// *word == from.
	template <class Avail>
	void sleep_until(const uint32_t *word, uint32_t *event, uint32_t from, SideStats &st, uint32_t &poll,
			 Avail avail)
	{
		st.blocked++;
		if constexpr (Wait::poll > 0 && Wait::batches) {
			uint32_t spent = 0;
			for (uint32_t step = 1; spent < poll; spent += step, step += step < 16 ? step : 0) {
				if (avail() >= batch_)
					break;
				for (uint32_t i = 0; i < step; i++)
					uarch_cpu_relax();
			}
			if (spent < poll || avail() != 0) {
				poll = poll < Wait::poll / 2 ? poll * 2 : Wait::poll;
				return;
			}
			poll = poll / 2 > min_poll ? poll / 2 : min_poll;
		} else {
			for (uint32_t i = 0; i < Wait::poll; i++) {
				if (avail() != 0)
					return;
				uarch_cpu_relax();
			}
		}
		auto cond = [&] { return avail() != 0; };
		for (uint32_t spins = 0; !cond();) {
			if constexpr (!Wait::sleeps) {
				// A pause per check; every 4096 a sched_yield(), which
				// returns at once when nothing else wants this CPU, and
				// otherwise stops a spinner from holding the CPU that the
				// other side needs to make progress.
				uarch_cpu_relax();
				if (++spins % 4096 == 0)
					sched_yield();
			} else {
				__atomic_store_n(event, from, __ATOMIC_RELAXED);
				Barrier::mb(); // the event store before the re-check's loads
				if (!cond()) {
					st.waits++;
					Wait::wait(word, from);
				}
			}
		}
	}

	// len: 0..slot_size, or eof for close().
	int put(const void *p, uint32_t len, bool block)
	{
		if (prod_.closed)
			return EPIPE;
		const uint32_t h = prod_.head;
		if (h - prod_.tail_cache > mask_) {
			prod_.tail_cache = __atomic_load_n(&tail_.v, __ATOMIC_ACQUIRE);
			if (h - prod_.tail_cache > mask_) {
				if (!block)
					return EAGAIN;
				sleep_until(&tail_.v, &prod_event_.v, h - mask_ - 1, prod_.stats, prod_.poll, [&] {
					prod_.tail_cache = __atomic_load_n(&tail_.v, __ATOMIC_ACQUIRE);
					return mask_ + 1 - (h - prod_.tail_cache);
				});
			}
		}
		char *s = slot(h);
		std::memcpy(s, &len, sizeof len);
		if (len != eof)
			Copy::copy(s + header, p, len);
		else
			prod_.closed = true;
		__atomic_store_n(&head_.v, h + 1, __ATOMIC_RELEASE);
		prod_.head = h + 1;
		// The slot after this one, if the consumer has freed it.
		if (h + 1 - prod_.tail_cache <= mask_)
			uarch_prefetchw(slot(h + 1));
		notify(&head_.v, &cons_event_.v, h, prod_);
		return 0;
	}

	long get(void *buf, uint32_t cap, bool block)
	{
		const uint32_t t = cons_.tail;
		if (cons_.head_cache == t) {
			cons_.head_cache = __atomic_load_n(&head_.v, __ATOMIC_ACQUIRE);
			if (cons_.head_cache == t) {
				if (!block)
					return -EAGAIN;
				sleep_until(&head_.v, &cons_event_.v, t, cons_.stats, cons_.poll, [&] {
					cons_.head_cache = __atomic_load_n(&head_.v, __ATOMIC_ACQUIRE);
					return cons_.head_cache - t;
				});
			}
		}
		const char *s = slot(t);
		uint32_t len;
		std::memcpy(&len, s, sizeof len);
		if (len == eof)
			return -EPIPE; // stays queued: every later pop says so too
		if (len > cap)
			return -EMSGSIZE;
		// The next message, if it is already published.
		if (t + 1 != cons_.head_cache)
			uarch_prefetch(slot(t + 1));
		Copy::copy(buf, s + header, len);
		__atomic_store_n(&tail_.v, t + 1, __ATOMIC_RELEASE);
		cons_.tail = t + 1;
		notify(&tail_.v, &prod_event_.v, t, cons_);
		return long(len);
	}

	// Shared words, one per line pair: written by one side, read by the other.
	struct alignas(line) Word {
		uint32_t v = 0;
	};
	Word head_;       // next index the producer writes
	Word tail_;       // next index the consumer reads
	Word cons_event_; // the consumer sleeps until head_ leaves this value
	Word prod_event_; // the producer sleeps until tail_ leaves this value

	// Each side's own copies and counters.
	struct alignas(line) Producer {
		uint32_t head, tail_cache;
		uint32_t poll = Wait::poll;
		bool closed = false;
		SideStats stats;
	} prod_;
	struct alignas(line) Consumer {
		uint32_t tail, head_cache;
		uint32_t poll = Wait::poll;
		SideStats stats;
	} cons_;

	// Read-only after construction.
	char *slots_;
	size_t stride_;
	uint32_t mask_, slot_size_, batch_;
};

} // namespace uarch_ring
