// The idle wait and wake through the checked-call trampoline: each stage
// this CPU has (the others are reported skipped by name), alone or before
// the futex, returning by a changed word, by its timeout and by a wake from
// another thread; and the exported uarch_idle_wait/uarch_idle_wake. No
// callee-saved register, flag, stack pointer or upper vector state may
// change across a call.
#include <gtest/gtest.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include "checked_call.h"
#include "dispatch/state.h"
#include "idle/idle.h"
#include "select/plan.h"
#include "uarch.h"

namespace {

using namespace uarch;

IdlePolicy policy_of(Stage s)
{
	IdlePolicy p{};
	p.stages[p.nstages++] = s;
	if (s != Stage::futex)
		p.stages[p.nstages++] = Stage::futex;
	p.spin_ns = 2000;        // short stages: a 300 us timeout passes through all
	p.monitor_ns = 20000;
	p.umwait_c01 = 1;
	return p;
}

// Waits on w (at expected) through the checked call while another thread
// stores and wakes after delay_us; returns what the wait returned.
int wait_woken(const char *name, const IdlePolicy &p, int delay_us)
{
	alignas(4) static uint32_t w;
	__atomic_store_n(&w, 0, __ATOMIC_SEQ_CST);
	std::thread waker([delay_us] {
		std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
		__atomic_store_n(&w, 1, __ATOMIC_SEQ_CST);
		checked::checked_call("idle_wake", "idle_wake", 1, &idle_wake, &w, 1);
	});
	// 5 s: a lost wake-up fails here instead of hanging.
	int r = checked::checked_call(name, "idle_wait", 0, &idle_wait, static_cast<const uint32_t *>(&w),
				      uint32_t(0), int64_t(5000000000), p);
	waker.join();
	return r;
}

} // namespace

TEST(IdleChecked, EveryStage)
{
	const Cpu &cpu = state().cpu;
	printf("[ checked  ] %s\n", checked::coverage().c_str());
	int ran = 0;
	for (uint32_t i = 0; i < uint32_t(Stage::count); i++) {
		Stage s = Stage(i);
		std::string name = std::string("stage ") + stage_name(s);
		if (!stage_runs_on(s, cpu)) {
			printf("[ skipped  ] %s: this CPU cannot run it\n", name.c_str());
			continue;
		}
		IdlePolicy p = policy_of(s);
		alignas(4) uint32_t w = 7;
		const uint32_t *cw = &w;
		EXPECT_EQ(checked::checked_call(name.c_str(), "idle_wait", 0, &idle_wait, cw, uint32_t(8), int64_t(-1), p), 0)
			<< name << ": word already changed";
		EXPECT_EQ(checked::checked_call(name.c_str(), "idle_wait", 0, &idle_wait, cw, uint32_t(7), int64_t(300000), p),
			  ETIMEDOUT)
			<< name << ": 300 us timeout";
		EXPECT_EQ(checked::checked_call(name.c_str(), "idle_wait", 0, &idle_wait, cw, uint32_t(7), int64_t(0), p),
			  ETIMEDOUT)
			<< name << ": zero timeout";
		EXPECT_EQ(checked::checked_call(name.c_str(), "idle_wait", 0, &idle_wait,
						static_cast<const uint32_t *>(nullptr), uint32_t(0), int64_t(-1), p),
			  EINVAL)
			<< name << ": NULL";
		EXPECT_EQ(wait_woken(name.c_str(), p, 50), 0) << name << ": woken during the spin";
		EXPECT_EQ(wait_woken(name.c_str(), p, 20000), 0) << name << ": woken in the last stage";
		ran++;
	}
	alignas(4) uint32_t nobody = 0;
	EXPECT_EQ(checked::checked_call("idle_wake", "idle_wake", 0, &idle_wake, &nobody, 1), 0);
	printf("[ checked  ] %d idle stages\n", ran);
	EXPECT_GE(ran, 2);   // spin and futex exist everywhere
}

TEST(IdleChecked, Exported)
{
	alignas(4) static uint32_t w;
	__atomic_store_n(&w, 0, __ATOMIC_SEQ_CST);
	const uint32_t *cw = &w;
	EXPECT_EQ(checked::checked_call("exported", "idle_wait", 0, &uarch_idle_wait, cw, uint32_t(1), int64_t(-1)), 0);
	EXPECT_EQ(checked::checked_call("exported", "idle_wait", 0, &uarch_idle_wait, cw, uint32_t(0), int64_t(200000)),
		  ETIMEDOUT);
	std::thread waker([] {
		std::this_thread::sleep_for(std::chrono::milliseconds(5));
		__atomic_store_n(&w, 1, __ATOMIC_SEQ_CST);
		checked::checked_call("exported", "idle_wake", 1, &uarch_idle_wake, &w, 1);
	});
	EXPECT_EQ(checked::checked_call("exported", "idle_wait", 0, &uarch_idle_wait, cw, uint32_t(0),
					int64_t(5000000000)),
		  0);
	waker.join();
}
