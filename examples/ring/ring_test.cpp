// uarch_ring::Ring: every message arrives once, in order and intact, for
// every size, in bursts and trickles, with either side slow, across the
// wrap of the indices; each threaded test runs under a watchdog that turns
// a hang (a lost wake-up) into a failure with a message.
#include "ring.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <functional>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#ifndef RING_TEST_LINK
#define RING_TEST_LINK "unknown"
#endif

using namespace uarch_ring;

namespace {

// Aborts the process with a message if not destroyed within `seconds`.
class Watchdog {
public:
	Watchdog(double seconds, std::string what, std::function<std::string()> state = {})
		: thread_([this, seconds, what = std::move(what), state = std::move(state)] {
			  std::unique_lock<std::mutex> lk(m_);
			  if (!cv_.wait_for(lk, std::chrono::duration<double>(seconds), [&] { return done_; })) {
				  std::fprintf(stderr, "watchdog: %s hung for %.1f s%s%s\n", what.c_str(), seconds,
					       state ? ": " : "", state ? state().c_str() : "");
				  std::fflush(stderr);
				  std::abort();
			  }
		  })
	{
	}
	~Watchdog()
	{
		{
			std::lock_guard<std::mutex> lk(m_);
			done_ = true;
		}
		cv_.notify_one();
		thread_.join();
	}

private:
	std::mutex m_;
	std::condition_variable cv_;
	bool done_ = false;
	std::thread thread_; // last: starts after the members above exist
};

// The payload of message seq: bytes from a generator seeded by seq.
void fill(uint64_t seq, unsigned char *p, uint32_t len)
{
	uint64_t x = seq * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
	for (uint32_t i = 0; i < len; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		p[i] = (unsigned char)(x >> 24);
	}
}

// Order-dependent checksum over every message (length and bytes).
struct Checksum {
	uint64_t h = 1469598103934665603ull;
	void add(const unsigned char *p, uint32_t len)
	{
		for (int i = 0; i < 4; i++)
			h = (h ^ ((len >> (8 * i)) & 0xff)) * 1099511628211ull;
		for (uint32_t i = 0; i < len; i++)
			h = (h ^ p[i]) * 1099511628211ull;
	}
};

// Random pauses: mostly none, sometimes a short spin, rarely a sleep.
struct Delays {
	std::mt19937 rng;
	explicit Delays(uint32_t seed) : rng(seed) {}
	void operator()()
	{
		uint32_t r = rng();
		if ((r & 15) == 0) {
			for (uint32_t i = (r >> 8) & 1023; i--;)
				uarch_cpu_relax();
		} else if ((r & 255) == 1) {
			std::this_thread::sleep_for(std::chrono::microseconds(10 + (r >> 8) % 190));
		} else if ((r & 4095) == 2) {
			std::this_thread::sleep_for(std::chrono::milliseconds(1));
		}
	}
};

struct Plan {
	uint64_t messages = 1000;
	uint32_t capacity = 64, slot_size = 4096, first_index = 0;
	std::function<uint32_t(uint64_t)> size_of = [](uint64_t) { return 64u; };
	uint32_t trickle_us = 0; // producer sleeps this long after every message
	bool slow_producer = false, slow_consumer = false;
	double watchdog_s = 20;
};

struct Outcome {
	SideStats producer, consumer;
};

template <class R>
Outcome drive(const Plan &plan, const char *what)
{
	R ring(plan.capacity, plan.slot_size, plan.first_index);
	std::atomic<uint64_t> sent{0}, received{0};
	Checksum sent_sum, received_sum;
	Watchdog dog(plan.watchdog_s, what, [&] {
		std::ostringstream s;
		s << "sent " << sent.load() << " of " << plan.messages << ", received " << received.load();
		return s.str();
	});
	std::thread producer([&] {
		std::vector<unsigned char> buf(plan.slot_size);
		Delays delay(12345);
		for (uint64_t seq = 0; seq < plan.messages; seq++) {
			uint32_t len = plan.size_of(seq);
			fill(seq, buf.data(), len);
			sent_sum.add(buf.data(), len);
			EXPECT_EQ(ring.push(buf.data(), len), 0) << "message " << seq;
			sent.store(seq + 1, std::memory_order_relaxed);
			if (plan.trickle_us)
				std::this_thread::sleep_for(std::chrono::microseconds(plan.trickle_us));
			if (plan.slow_producer)
				delay();
		}
		EXPECT_EQ(ring.close(), 0);
	});
	std::vector<unsigned char> got(plan.slot_size), want(plan.slot_size);
	Delays delay(67890);
	uint64_t seq = 0, bad = 0;
	for (;;) {
		long n = ring.pop(got.data(), plan.slot_size);
		if (n == -EPIPE)
			break;
		if (n < 0) {
			ADD_FAILURE() << "pop returned " << n << " at message " << seq;
			break;
		}
		received_sum.add(got.data(), uint32_t(n));
		uint32_t len = plan.size_of(seq);
		fill(seq, want.data(), len);
		if (uint32_t(n) != len || std::memcmp(got.data(), want.data(), len)) {
			if (bad++ < 5)
				ADD_FAILURE() << "message " << seq << ": " << n << " bytes, expected " << len
					      << (uint32_t(n) == len ? " (contents differ)" : "");
		}
		received.store(++seq, std::memory_order_relaxed);
		if (plan.slow_consumer)
			delay();
	}
	producer.join();
	EXPECT_EQ(seq, plan.messages) << "messages received";
	EXPECT_EQ(bad, 0u) << "messages wrong";
	EXPECT_EQ(received_sum.h, sent_sum.h) << "checksum over all messages";
	return {ring.producer_stats(), ring.consumer_stats()};
}

template <class R>
class RingTest : public ::testing::Test {};

// A spinning side may wait out the other side's time slice when the two
// share a CPU on a busy machine: spin gets a third of the handoffs.
template <class R>
uint64_t handoffs(uint64_t n)
{
	return R::wait_type::sleeps ? n : n / 3;
}

using Policies = ::testing::Types<Ring<BarrierUarch, WaitUarch, CopyUarch>, Ring<BarrierUarch, WaitFutex, CopyUarch>,
				  Ring<BarrierUarch, WaitSpin, CopyUarch>, Ring<BarrierUarch, WaitUarchEager, CopyUarch>,
#if defined(__x86_64__)
				  Ring<BarrierMfence, WaitUarch, CopyLibc>,
#endif
				  Ring<BarrierSeqCst, WaitFutex, CopyLibc>>;

struct PolicyName {
	template <class R>
	static std::string GetName(int)
	{
		return std::string(R::barrier_type::name) + "_" + R::wait_type::name + "_" + R::copy_type::name;
	}
};
TYPED_TEST_SUITE(RingTest, Policies, PolicyName);

// Sizes 1..4096, each once, then again downwards, through a 4 KiB slot.
TYPED_TEST(RingTest, EverySizeBurst)
{
	Plan p;
	p.messages = 2 * 4096;
	p.size_of = [](uint64_t s) { return uint32_t(s < 4096 ? s + 1 : 8192 - s); };
	drive<TypeParam>(p, "EverySizeBurst");
}

// Small slots (odd size, strides below a line), sizes 0..slot, random.
TYPED_TEST(RingTest, SmallSlotsRandomSizes)
{
	for (uint32_t slot : {1u, 7u, 120u, 200u}) {
		Plan p;
		p.messages = handoffs<TypeParam>(3000);
		p.capacity = 4;
		p.slot_size = slot;
		p.size_of = [slot](uint64_t s) { return uint32_t((s * 2654435761u >> 7) % (slot + 1)); };
		drive<TypeParam>(p, "SmallSlotsRandomSizes");
	}
}

// The producer pauses after every message: the consumer finds the ring
// empty each time, so the sleep/wake-up path carries every message.
TYPED_TEST(RingTest, Trickle)
{
	Plan p;
	p.messages = 300;
	p.trickle_us = 20;
	p.size_of = [](uint64_t s) { return uint32_t(1 + s * 13 % 4096); };
	Outcome o = drive<TypeParam>(p, "Trickle");
	if (TypeParam::wait_type::sleeps) {
		EXPECT_GT(o.consumer.waits, 0u) << "the consumer never slept";
		EXPECT_GT(o.producer.notifies, 0u) << "the producer never saw the consumer's flag";
	} else {
		EXPECT_EQ(o.consumer.waits + o.producer.notifies + o.consumer.notifies, 0u) << "spin never sleeps";
	}
}

// A slow consumer: the producer keeps finding the ring full.
TYPED_TEST(RingTest, SlowConsumer)
{
	Plan p;
	p.messages = handoffs<TypeParam>(6000);
	p.capacity = 8;
	p.slow_consumer = true;
	p.size_of = [](uint64_t s) { return uint32_t(1 + s * 7 % 4096); };
	Outcome o = drive<TypeParam>(p, "SlowConsumer");
	if (TypeParam::wait_type::sleeps) {
		EXPECT_GT(o.producer.waits, 0u) << "the producer never slept on a full ring";
		EXPECT_GT(o.consumer.notifies, 0u) << "the consumer never woke the producer";
	}
}

// A slow producer: the consumer keeps finding the ring empty.
TYPED_TEST(RingTest, SlowProducer)
{
	Plan p;
	p.messages = handoffs<TypeParam>(6000);
	p.capacity = 8;
	p.slow_producer = true;
	p.size_of = [](uint64_t s) { return uint32_t(1 + s * 11 % 4096); };
	Outcome o = drive<TypeParam>(p, "SlowProducer");
	if (TypeParam::wait_type::sleeps) {
		EXPECT_GT(o.consumer.waits, 0u) << "the consumer never slept on an empty ring";
	}
}

// One slot: every message is a full and an empty ring, both sides sleep and
// wake each other all the time (where a lost wake-up would hang), with both
// sides randomly slow, across the 2^32 wrap of the indices.
TYPED_TEST(RingTest, OneSlotPingPongAcrossWrap)
{
	Plan p;
	p.messages = handoffs<TypeParam>(6000);
	p.capacity = 1;
	p.slot_size = 64;
	p.first_index = 0xffffffffu - 999;
	p.slow_producer = p.slow_consumer = true;
	p.size_of = [](uint64_t s) { return uint32_t(s % 65); };
	drive<TypeParam>(p, "OneSlotPingPongAcrossWrap");
}

// A consumer asleep on an empty ring is woken by close().
TYPED_TEST(RingTest, CloseWakesSleepingConsumer)
{
	TypeParam ring(4, 16);
	Watchdog dog(10, "CloseWakesSleepingConsumer");
	std::thread consumer([&] {
		char b[16];
		EXPECT_EQ(ring.pop(b, sizeof b), 1);
		EXPECT_EQ(ring.pop(b, sizeof b), -EPIPE);
	});
	std::this_thread::sleep_for(std::chrono::milliseconds(20));
	ASSERT_EQ(ring.push("x", 1), 0);
	std::this_thread::sleep_for(std::chrono::milliseconds(20));
	EXPECT_EQ(ring.close(), 0);
	consumer.join();
}

// close() right behind a message, at random moments of the consumer's
// wait (spinning, in a monitor wait or asleep in the futex): the
// end-of-stream record always gets through.
TYPED_TEST(RingTest, CloseRacesTheConsumersWait)
{
	Watchdog dog(20, "CloseRacesTheConsumersWait");
	std::mt19937 rng(4242);
	for (int i = 0; i < 200; i++) {
		TypeParam ring(2, 8);
		std::thread consumer([&] {
			char b[8];
			EXPECT_EQ(ring.pop(b, sizeof b), 1);
			EXPECT_EQ(ring.pop(b, sizeof b), -EPIPE);
		});
		auto pause = std::chrono::microseconds(rng() % 60);
		std::this_thread::sleep_for(pause);
		ASSERT_EQ(ring.push("x", 1), 0);
		for (uint32_t n = rng() % 4096; n--;)
			uarch_cpu_relax();
		ASSERT_EQ(ring.close(), 0);
		consumer.join();
	}
}

// close() on a full ring waits for a free slot, as push() does.
TYPED_TEST(RingTest, CloseWaitsWhileFull)
{
	TypeParam ring(1, 8);
	Watchdog dog(10, "CloseWaitsWhileFull");
	ASSERT_EQ(ring.push("a", 1), 0);
	std::thread consumer([&] {
		std::this_thread::sleep_for(std::chrono::milliseconds(20));
		char b[8];
		EXPECT_EQ(ring.pop(b, sizeof b), 1);
		EXPECT_EQ(ring.pop(b, sizeof b), -EPIPE);
	});
	EXPECT_EQ(ring.close(), 0);
	consumer.join();
}

// A wait that, instead of sleeping, runs the other side's code right at the
// moment this side would fall asleep, and checks that that code sent the
// wake-up the sleeper needs (one thread, every interleaving chosen).
struct WaitScripted {
	[[maybe_unused]] static constexpr const char *name = "scripted";
	static constexpr bool sleeps = true;
	static constexpr uint32_t poll = 0;
	static constexpr bool batches = false;
	static inline std::function<void()> other_side;
	static inline int waits = 0, wakes = 0, lost = 0;
	static void wait(const uint32_t *w, uint32_t v)
	{
		waits++;
		int before = wakes;
		auto f = std::move(other_side);
		other_side = nullptr;
		if (f)
			f();
		// The other side ran after this one committed to sleep (a futex
		// has compared *w with v): only a wake-up gets it out.
		(void)w, (void)v;
		if (wakes == before)
			lost++;
	}
	static int wake(uint32_t *)
	{
		wakes++;
		return 1;
	}
};

TEST(Ring, EventIndexWakesEachSleeperOnce)
{
	using R = Ring<BarrierUarch, WaitScripted, CopyUarch>;
	R r(2, 8);
	char b[8];
	// The consumer finds the ring empty; the producer pushes two messages
	// while it falls asleep: one wake-up, for the first.
	WaitScripted::other_side = [&] {
		EXPECT_EQ(r.push("a", 1), 0);
		EXPECT_EQ(r.push("b", 1), 0);
	};
	EXPECT_EQ(r.pop(b, 8), 1);
	EXPECT_EQ(b[0], 'a');
	EXPECT_EQ(WaitScripted::waits, 1);
	EXPECT_EQ(WaitScripted::wakes, 1);
	// Nobody asleep: no wake-up.
	EXPECT_EQ(r.push("c", 1), 0);
	EXPECT_EQ(WaitScripted::wakes, 1);
	// The producer finds the ring full (b, c); the consumer pops while it
	// falls asleep: one wake-up.
	WaitScripted::other_side = [&] {
		EXPECT_EQ(r.pop(b, 8), 1);
		EXPECT_EQ(b[0], 'b');
	};
	EXPECT_EQ(r.push("d", 1), 0);
	EXPECT_EQ(WaitScripted::waits, 2);
	EXPECT_EQ(WaitScripted::wakes, 2);
	EXPECT_EQ(r.pop(b, 8), 1);
	EXPECT_EQ(b[0], 'c');
	EXPECT_EQ(r.pop(b, 8), 1);
	EXPECT_EQ(b[0], 'd');
	EXPECT_EQ(WaitScripted::wakes, 2) << "pops with nobody asleep";
	// The consumer falls asleep on the empty ring; the producer closes it.
	WaitScripted::other_side = [&] { r.close(); };
	EXPECT_EQ(r.pop(b, 8), -EPIPE);
	EXPECT_EQ(WaitScripted::waits, 3);
	EXPECT_EQ(WaitScripted::wakes, 3);
	EXPECT_EQ(WaitScripted::lost, 0) << "a sleeper was left without its wake-up";
	EXPECT_EQ(r.producer_stats().notifies, 2u);
	EXPECT_EQ(r.consumer_stats().notifies, 1u);
}

// The batching poll: a consumer that has caught up waits for a batch only
// while it polls; a lone message (here after a burst, the producer then
// silent) still arrives as soon as the poll ends, not when more come.
TEST(Ring, LoneMessageAfterBurstIsNotHeldForABatch)
{
	Watchdog dog(20, "LoneMessageAfterBurstIsNotHeldForABatch");
	Ring<BarrierUarch, WaitUarch, CopyUarch> ring(256, 64);
	std::atomic<int64_t> pushed_ns{0}, popped_ns{0};
	auto now_ns = [] {
		return std::chrono::duration_cast<std::chrono::nanoseconds>(
			       std::chrono::steady_clock::now().time_since_epoch())
			.count();
	};
	char buf[64] = {};
	std::thread consumer([&] {
		char in[64];
		for (int i = 0; i < 2000; i++)
			ASSERT_GE(ring.pop(in, sizeof in), 0);
		ASSERT_EQ(ring.pop(in, sizeof in), 64); // the lone one
		popped_ns = now_ns();
		EXPECT_EQ(ring.pop(in, sizeof in), -EPIPE);
	});
	for (int i = 0; i < 2000; i++)
		ASSERT_EQ(ring.push(buf, 64), 0); // a burst: the consumer's poll grows
	std::this_thread::sleep_for(std::chrono::milliseconds(5));
	pushed_ns = now_ns();
	ASSERT_EQ(ring.push(buf, 64), 0);
	std::this_thread::sleep_for(std::chrono::milliseconds(200));
	int64_t seen = popped_ns.load();
	ring.close();
	consumer.join();
	ASSERT_NE(seen, 0) << "the lone message waited for the close";
	EXPECT_LT(seen - pushed_ns.load(), 50000000) << "a lone message took " << (seen - pushed_ns) / 1000 << " us";
}

TEST(Ring, RejectsBadGeometry)
{
	using R = Ring<>;
	EXPECT_THROW(R(0, 8), std::invalid_argument);
	EXPECT_THROW(R(3, 8), std::invalid_argument);
	EXPECT_THROW(R(6, 8), std::invalid_argument);
	EXPECT_THROW(R(1u << 31 | 1u << 30, 8), std::invalid_argument);
	EXPECT_THROW(R(4, 0), std::invalid_argument);
	EXPECT_THROW(R(4, (1u << 30) + 1), std::invalid_argument);
	R one(1, 1);
	EXPECT_EQ(one.capacity(), 1u);
	EXPECT_EQ(one.slot_size(), 1u);
}

// The non-blocking calls, on one thread: full, empty, too big, zero bytes,
// close, across the wrap.
TEST(Ring, TryPushTryPop)
{
	Ring<> r(4, 8, 0xfffffffeu);
	char b[8] = {};
	EXPECT_EQ(r.try_pop(b, 8), -EAGAIN);
	EXPECT_EQ(r.try_push("123456789", 9), EMSGSIZE);
	for (int i = 0; i < 4; i++) {
		char m[3] = {char('a' + i), char('b' + i), char('c' + i)};
		EXPECT_EQ(r.try_push(m, uint32_t(i)), 0) << i;
	}
	EXPECT_EQ(r.try_push("x", 1), EAGAIN) << "full";
	EXPECT_EQ(r.try_pop(b, 8), 0) << "zero-length message";
	EXPECT_EQ(r.try_pop(b, 8), 1);
	EXPECT_EQ(b[0], 'b');
	EXPECT_EQ(r.try_pop(b, 1), -EMSGSIZE) << "buffer too small";
	EXPECT_EQ(r.try_pop(b, 2), 2) << "the message stayed queued";
	EXPECT_EQ(std::string(b, 2), "cd");
	EXPECT_EQ(r.try_push("yz", 2), 0);
	EXPECT_EQ(r.close(), 0);
	EXPECT_EQ(r.close(), EPIPE);
	EXPECT_EQ(r.try_push("x", 1), EPIPE);
	EXPECT_EQ(r.push("x", 1), EPIPE);
	EXPECT_EQ(r.try_pop(b, 8), 3);
	EXPECT_EQ(std::string(b, 3), "def");
	EXPECT_EQ(r.pop(b, 8), 2);
	EXPECT_EQ(std::string(b, 2), "yz");
	EXPECT_EQ(r.try_pop(b, 8), -EPIPE);
	EXPECT_EQ(r.pop(b, 8), -EPIPE);
	EXPECT_EQ(r.producer_stats().notifies + r.consumer_stats().notifies, 0u) << "nobody slept";
}

// The watchdog itself: a consumer waiting on a ring nobody fills is killed
// with a message naming the test, not left to hang.
TEST(RingDeathTest, WatchdogTurnsHangIntoFailure)
{
	// The default "fast" style: fork without exec, which also works under
	// qemu-user (no re-exec of a foreign binary). Death tests run first,
	// while this process has no other thread.
	EXPECT_DEATH(
		{
			Ring<> r(4, 8);
			Watchdog dog(0.3, "a consumer on an empty ring", [] { return std::string("0 received"); });
			char b[8];
			r.pop(b, sizeof b);
		},
		"watchdog: a consumer on an empty ring hung for 0.3 s: 0 received");
}

// The binary is linked the way its name says: the static one maps no
// libuarch.so and no dynamic loader, the shared one maps libuarch.so.
TEST(Ring, LinkedAsBuilt)
{
	std::ifstream f("/proc/self/maps");
	ASSERT_TRUE(f) << "/proc/self/maps";
	std::string maps((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
	bool has_lib = maps.find("libuarch.so") != std::string::npos;
	bool has_ld = maps.find("/ld-linux") != std::string::npos || maps.find("/ld-musl") != std::string::npos;
	std::string link = RING_TEST_LINK;
	if (link == "static") {
		EXPECT_FALSE(has_lib) << "libuarch.so is mapped";
		EXPECT_FALSE(has_ld) << "a dynamic loader is mapped";
	} else if (link == "shared") {
		EXPECT_TRUE(has_lib) << "libuarch.so is not mapped";
	} else {
		GTEST_SKIP() << "link mode not known: " << link;
	}
	EXPECT_NE(uarch_impl("memcpy"), nullptr);
	std::printf("ring_test (%s): memcpy=%s smp_mb=%s idle_wait=%s\n", link.c_str(), uarch_impl("memcpy"),
		    uarch_impl("smp_mb"), uarch_impl("idle_wait"));
}

} // namespace
