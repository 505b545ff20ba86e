// Shared by the idle tests: the mechanisms to run, a watchdog that turns a
// hang (a lost wake-up) into a failure, and small clocks.
#pragma once
#include <gtest/gtest.h>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include "dispatch/state.h"
#include "idle/idle.h"
#include "idle/stages.h"
#include "select/plan.h"

namespace idle_test {

using namespace uarch;
using Clock = std::chrono::steady_clock;

inline double secs_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
inline int64_t ns_since(Clock::time_point t)
{
	return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count();
}

// Aborts the process with a message when not destroyed within `seconds`:
// a wait that never returns fails the test run instead of hanging it.
class Watchdog {
public:
	Watchdog(int seconds, std::string what) : what_(std::move(what))
	{
		thread_ = std::thread([this, seconds] {
			std::unique_lock<std::mutex> lk(m_);
			if (!cv_.wait_for(lk, std::chrono::seconds(seconds), [this] { return done_; })) {
				std::fprintf(stderr, "watchdog: %s did not finish within %d s (a lost wake-up?)\n",
					     what_.c_str(), seconds);
				std::fflush(stderr);
				std::abort();
			}
		});
	}
	~Watchdog()
	{
		{
			std::lock_guard<std::mutex> lk(m_);
			done_ = true;
		}
		cv_.notify_all();
		thread_.join();
	}

private:
	std::string what_;
	std::mutex m_;
	std::condition_variable cv_;
	bool done_ = false;
	std::thread thread_;
};

inline std::string current_test()
{
	const auto *t = ::testing::UnitTest::GetInstance()->current_test_info();
	return t ? std::string(t->test_suite_name()) + "." + t->name() : "?";
}

inline const Cpu &host() { return state().cpu; }

inline IdlePolicy make_policy(std::initializer_list<Stage> stages, uint32_t spin_ns = 20000,
			      uint32_t monitor_ns = 200000, bool c01 = true)
{
	IdlePolicy p{};
	for (Stage s : stages)
		p.stages[p.nstages++] = s;
	p.spin_ns = spin_ns;
	p.monitor_ns = monitor_ns;
	p.umwait_c01 = c01;
	return p;
}

// A named way to wait: one stage alone (with the futex behind it where the
// stage cannot wait forever cheaply), short budgets that make every wait
// cross stages, and the policy this process bound.
struct Mechanism {
	const char *name;
	IdlePolicy policy;
	bool spins;   // some stage watches memory (handoffs are cheap)
};

inline IdlePolicy bound_policy() { return state().plan.idle; }

// The monitor stage this CPU has (spin when none), for the "short" policy.
inline Stage host_monitor()
{
	for (Stage s : {Stage::umwait, Stage::mwaitx, Stage::wfet, Stage::wfe})
		if (stage_runs_on(s, host()))
			return s;
	return Stage::spin;
}

inline std::vector<Mechanism> mechanisms()
{
	Stage mon = host_monitor();
	IdlePolicy shorts = mon == Stage::spin ? make_policy({Stage::spin, Stage::futex}, 300)
					       : make_policy({Stage::spin, mon, Stage::futex}, 300, 300);
	return {
		{"policy", bound_policy(), true},
		{"spin", make_policy({Stage::spin}), true},
		{"futex", make_policy({Stage::futex}), false},
		{"short", shorts, true},
		{"umwait_c01", make_policy({Stage::umwait, Stage::futex}, 0, 200000, true), true},
		{"umwait_c02", make_policy({Stage::umwait, Stage::futex}, 0, 200000, false), true},
		{"tpause", make_policy({Stage::tpause, Stage::futex}, 0, 200000, true), true},
		{"mwaitx", make_policy({Stage::mwaitx, Stage::futex}, 0, 200000, true), true},
		{"wfe", make_policy({Stage::wfe, Stage::futex}, 0, 200000), true},
		{"wfet", make_policy({Stage::wfet, Stage::futex}, 0, 200000), true},
	};
}

// Why this CPU cannot run the mechanism ("" when it can).
inline std::string lacks(const IdlePolicy &p)
{
	for (uint32_t i = 0; i < p.nstages; i++) {
		Stage s = p.stages[i];
		if (stage_runs_on(s, host()))
			continue;
		switch (s) {
		case Stage::umwait: case Stage::tpause: return std::string(stage_name(s)) + ": CPU lacks waitpkg";
		case Stage::mwaitx: return "mwaitx: CPU lacks monitorx";
		case Stage::wfe: return "wfe: not an arm64 CPU";
		case Stage::wfet: return "wfet: CPU lacks wfxt";
		default: return std::string(stage_name(s)) + ": not on this CPU";
		}
	}
	return "";
}

inline std::string mech_name(const ::testing::TestParamInfo<Mechanism> &i) { return i.param.name; }

inline uint32_t ld(const uint32_t *a) { return __atomic_load_n(a, __ATOMIC_ACQUIRE); }
inline void st(uint32_t *a, uint32_t v) { __atomic_store_n(a, v, __ATOMIC_RELEASE); }

} // namespace idle_test
