// The state is never waited for: a context that finds every build slot
// claimed builds on its own stack, one that finds slots claimed by another
// process (a fork while a thread built) reclaims them, and every build
// gives the same plan. Its own process: it unpublishes the state.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cstring>
#include "dispatch/state.h"

using namespace uarch;

namespace {

bool same_plan(const Plan &a, const Plan &b)
{
	return std::memcmp(a.impl, b.impl, sizeof a.impl) == 0 && std::memcmp(&a.mem, &b.mem, sizeof a.mem) == 0 &&
	       std::memcmp(&a.idle, &b.idle, sizeof a.idle) == 0;
}

} // namespace

TEST(State, BuiltOncePublishedForGood)
{
	const State *a = state_build();
	ASSERT_NE(a, nullptr);
	EXPECT_EQ(state_published(), a);
	EXPECT_EQ(state_build(), a);
	EXPECT_TRUE(same_plan(plan_now(), a->plan));
}

TEST(State, EverySlotBusyBuildsOnTheStack)
{
	const Plan want = state_build()->plan;
	for (unsigned busy = 1; busy <= 8; busy++) {
		state_forget_for_test(busy);   // the first `busy` slots being built by live contexts
		const Plan got = plan_now();   // returns: no wait for any of them
		EXPECT_TRUE(same_plan(got, want)) << busy << " slots busy";
		// Where a slot was free the build took it and published it.
		const State *s = state_published();
		if (busy < 4)
			EXPECT_NE(s, nullptr) << busy << " slots busy";
	}
	state_forget_for_test(0);
	ASSERT_NE(state_build(), nullptr);
}

TEST(State, AForkDuringABuildLeavesTheChildWorking)
{
	const Plan want = state_build()->plan;
	// Every slot claimed, as if four threads were building when the fork
	// came: in the child nobody will finish them, and it plans on its
	// stack, never waiting.
	state_forget_for_test(4);
	EXPECT_EQ(state_build(), nullptr) << "a slot claimed by a live context of this process was taken";
	pid_t pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		alarm(10);
		_exit(same_plan(plan_now(), want) ? 0 : 1);
	}
	int status = 0;
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
	state_forget_for_test(0);
	ASSERT_NE(state_build(), nullptr);
}

// A vfork child has a pid of its own but shares the parent's memory: a
// slot the parent's threads are still filling must not be taken over
// (the child would write the same slot at the same time).
TEST(State, AVforkChildLeavesTheParentsClaimsAlone)
{
	const Plan want = state_build()->plan;
	state_forget_for_test(4);   // four of the parent's threads building
	static volatile int took_a_slot = -1, right_plan = -1;
	pid_t pid = vfork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		took_a_slot = state_build() != nullptr;
		right_plan = same_plan(plan_now(), want);
		_exit(0);
	}
	int status = 0;
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	if (took_a_slot == -1) {   // the child's stores did not reach this memory
		state_forget_for_test(0);
		GTEST_SKIP() << "vfork does not share the parent's memory here (qemu-user runs it as a fork)";
	}
	EXPECT_EQ(0, took_a_slot) << "a vfork child took over a slot its parent's thread was building";
	EXPECT_EQ(1, right_plan);
	EXPECT_EQ(nullptr, state_published());
	state_forget_for_test(0);
	ASSERT_NE(state_build(), nullptr);
}
