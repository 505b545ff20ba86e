// The idle policy per CPU, pinned for the 19 real CPUID dumps: which
// stages, in what order, with what budgets; UARCH_TUNABLES changes it and
// cannot make it use a stage the CPU lacks; and the policy this process
// bound only names stages this CPU can run.
#include <cstring>
#include "common.h"
#include "common/cpuid_dump.h"

using namespace idle_test;
using uarch::test::probe_dump;

namespace {

Plan plan_for(const Cpu &c, const char *tunables = nullptr)
{
	Tunables t;
	parse_tunables(tunables, tunables ? std::strlen(tunables) : 0, &t);
	Plan p;
	select_plan(c, t, &p);
	return p;
}

std::string stages(const IdlePolicy &p)
{
	std::string s;
	for (uint32_t i = 0; i < p.nstages; i++) {
		if (i)
			s += '+';
		s += stage_name(p.stages[i]);
	}
	return s;
}

struct Pin {
	const char *dump;
	const char *stages;
	uint32_t spin_ns, monitor_ns;
};

// The budgets: see x86_idle() in src/select/select.cpp for their sources.
constexpr uint32_t kSpin = 15000, kSpinBeforeMonitor = 2000, kMonitor = 100000;

const Pin pins[] = {
	{"GenuineIntel00806F8_SapphireRapids_05_CPUID.txt", "spin+umwait+futex", kSpinBeforeMonitor, kMonitor},
	{"GenuineIntel0090672_AlderLake_02_CPUID.txt", "spin+umwait+futex", kSpinBeforeMonitor, kMonitor},
	{"GenuineIntel00A06D1_GraniteRapids_03_CPUID.txt", "spin+umwait+futex", kSpinBeforeMonitor, kMonitor},
	{"GenuineIntel0090661_ElkhartLake_02_CPUID.txt", "spin+umwait+futex", kSpinBeforeMonitor, kMonitor},
	{"AuthenticAMD0800F12_K17_Zen_CPUID.txt", "spin+mwaitx+futex", kSpinBeforeMonitor, kMonitor},
	{"AuthenticAMD0830F10_K17_Rome_CPUID.txt", "spin+mwaitx+futex", kSpinBeforeMonitor, kMonitor},
	{"AuthenticAMD0A00F11_K19_Milan_CPUID1.txt", "spin+mwaitx+futex", kSpinBeforeMonitor, kMonitor},
	{"AuthenticAMD0A10F11_K19_Genoa_01_CPUID.txt", "spin+mwaitx+futex", kSpinBeforeMonitor, kMonitor},
	{"AuthenticAMD0B00F21_K20_Turin_01_CPUID.txt", "spin+mwaitx+futex", kSpinBeforeMonitor, kMonitor},
	{"HygonGenuine0900F11_Hygon_01_CPUID.txt", "spin+mwaitx+futex", kSpinBeforeMonitor, kMonitor},
	{"AuthenticAMD0020FF0_K8_Venice_CPUID.txt", "spin+futex", kSpin, kMonitor},
	{"CentaurHauls00307B2_KX6000_01_CPUID.txt", "spin+futex", kSpin, kMonitor},
	{"GenuineIntel00006F6_Conroe_CPUID.txt", "spin+futex", kSpin, kMonitor},
	{"GenuineIntel00106A2_Nehalem-EP_CPUID.txt", "spin+futex", kSpin, kMonitor},
	{"GenuineIntel00306F2_HaswellEP_CPUID.txt", "spin+futex", kSpin, kMonitor},
	{"GenuineIntel0050654_SkylakeX_CPUID.txt", "spin+futex", kSpin, kMonitor},
	{"GenuineIntel00506F1_Denverton_CPUID.txt", "spin+futex", kSpin, kMonitor},
	{"GenuineIntel00606A6_ICX_04_CPUID.txt", "spin+futex", kSpin, kMonitor},
	{"GenuineIntel00806C1_TigerLake_01_CPUID.txt", "spin+futex", kSpin, kMonitor},
};

class IdlePolicyPin : public ::testing::TestWithParam<Pin> {};

TEST_P(IdlePolicyPin, Default)
{
	Cpu c = probe_dump(GetParam().dump);
	ASSERT_EQ(c.arch, Arch::x86_64) << GetParam().dump;
	ASSERT_NE(c.family, 0u) << GetParam().dump << " not found (UARCH_TESTDATA?)";
	Plan p = plan_for(c);
	EXPECT_EQ(stages(p.idle), GetParam().stages);
	EXPECT_EQ(p.idle.spin_ns, GetParam().spin_ns);
	EXPECT_EQ(p.idle.monitor_ns, GetParam().monitor_ns);
	EXPECT_EQ(p.idle.umwait_c01, 1);
	EXPECT_EQ(p.impl[op_idle_wait], Impl::policy);
	// Every stage the policy chose runs on that CPU, and the list ends in
	// the futex (a long wait must not burn the CPU).
	for (uint32_t i = 0; i < p.idle.nstages; i++)
		EXPECT_TRUE(stage_runs_on(p.idle.stages[i], c)) << stage_name(p.idle.stages[i]);
	ASSERT_GT(p.idle.nstages, 0);
	EXPECT_EQ(p.idle.stages[p.idle.nstages - 1], Stage::futex);
}

// A process allowed one CPU sleeps at once (a spinning waiter would hold
// the CPU its waker needs); two CPUs, or an unknown count, keep the
// default; a stage list from UARCH_TUNABLES still wins.
TEST_P(IdlePolicyPin, OneCpu)
{
	Cpu c = probe_dump(GetParam().dump);
	c.cpus_allowed = 1;
	EXPECT_EQ(stages(plan_for(c).idle), "futex");
	EXPECT_EQ(stages(plan_for(c, "idle_stages=spin,futex").idle), "spin+futex");
	c.cpus_allowed = 2;
	EXPECT_EQ(stages(plan_for(c).idle), GetParam().stages);
	c.cpus_allowed = 0;
	EXPECT_EQ(stages(plan_for(c).idle), GetParam().stages);
}

// Tunables: a stage list the CPU can run replaces the default; one it
// cannot is refused (and the default stays); budgets and C0.1 apply.
TEST_P(IdlePolicyPin, Tunables)
{
	Cpu c = probe_dump(GetParam().dump);
	bool wp = c.has(f_waitpkg), mx = c.has(f_monitorx);

	Plan p = plan_for(c, "idle_stages=spin,futex:idle_spin_ns=3000:idle_monitor_ns=7000:idle_c01=0");
	EXPECT_EQ(stages(p.idle), "spin+futex");
	EXPECT_EQ(p.idle.spin_ns, 3000u);
	EXPECT_EQ(p.idle.monitor_ns, 7000u);
	EXPECT_EQ(p.idle.umwait_c01, 0);
	EXPECT_EQ(p.refused, 0u);

	p = plan_for(c, "idle_stages=umwait,futex");
	if (wp) {
		EXPECT_EQ(stages(p.idle), "umwait+futex");
		EXPECT_EQ(p.refused, 0u);
	} else {
		EXPECT_EQ(stages(p.idle), GetParam().stages) << "refused: the default stays";
		EXPECT_EQ(p.refused, 1u);
		EXPECT_EQ(p.refused_reason[0], refuse_bad_stage);
	}
	p = plan_for(c, "idle_stages=spin,tpause,futex");
	EXPECT_EQ(stages(p.idle), wp ? "spin+tpause+futex" : GetParam().stages);
	p = plan_for(c, "idle_stages=mwaitx,futex");
	EXPECT_EQ(stages(p.idle), mx ? "mwaitx+futex" : GetParam().stages);
	p = plan_for(c, "idle_stages=wfe,futex");   // an arm64 stage on x86
	EXPECT_EQ(stages(p.idle), GetParam().stages);
	EXPECT_EQ(p.refused, 1u);

	// A pure spin is allowed; a monitor stage without the futex behind it,
	// or the futex before another stage, is not.
	EXPECT_EQ(stages(plan_for(c, "idle_stages=spin").idle), "spin");
	EXPECT_EQ(stages(plan_for(c, "idle_stages=futex").idle), "futex");
	EXPECT_EQ(stages(plan_for(c, "idle_stages=futex,spin").idle), GetParam().stages);
	EXPECT_EQ(stages(plan_for(c, "idle_stages=spin,bogus,futex").idle), GetParam().stages);

	// Taking the feature away takes the stage away.
	p = plan_for(c, "mask=-waitpkg,-monitorx");
	EXPECT_EQ(stages(p.idle), "spin+futex");
}

INSTANTIATE_TEST_SUITE_P(Dumps, IdlePolicyPin, ::testing::ValuesIn(pins),
			 [](const ::testing::TestParamInfo<Pin> &i) {
				 std::string s = i.param.dump;
				 s = s.substr(0, s.find("_CPUID"));
				 for (char &ch : s)
					 if (!isalnum(static_cast<unsigned char>(ch)))
						 ch = '_';
				 return s;
			 });

// Every dump in the folder is pinned above (a new dump needs a pin).
TEST(IdlePolicy, EveryDumpPinned)
{
	EXPECT_EQ(sizeof pins / sizeof pins[0], 19u);
}

// This process: the bound policy runs here, ends in the futex, and the
// CPU's missing mechanisms are not in it.
TEST(IdlePolicy, HostPolicyRunsHere)
{
	const IdlePolicy &p = state().plan.idle;
	ASSERT_GT(p.nstages, 0);
	for (uint32_t i = 0; i < p.nstages; i++)
		EXPECT_TRUE(stage_runs_on(p.stages[i], host())) << stage_name(p.stages[i]);
	std::printf("  host policy: %s (spin %u ns, monitor %u ns)\n", stages(p).c_str(), p.spin_ns, p.monitor_ns);
	std::printf("  waitpkg %d, monitorx %d\n", host().has(f_waitpkg), host().has(f_monitorx));
	if (!getenv("UARCH_TUNABLES")) {
		EXPECT_EQ(p.stages[p.nstages - 1], Stage::futex);
	}
}

// Run with UARCH_TUNABLES set by meson (see meson.build): the library read
// them from the environment itself.
TEST(IdleEnv, TunablesFromEnvironment)
{
	const char *t = getenv("UARCH_TUNABLES");
	if (!t)
		GTEST_SKIP() << "UARCH_TUNABLES not set (run by the idle_env_tunables test)";
	const IdlePolicy &p = state().plan.idle;
	EXPECT_EQ(stages(p), getenv("UARCH_EXPECT_IDLE") ? getenv("UARCH_EXPECT_IDLE") : "spin+futex");
	EXPECT_EQ(p.spin_ns, 3000u);
	EXPECT_EQ(p.monitor_ns, 7000u);
	EXPECT_EQ(p.umwait_c01, 0);
	EXPECT_STREQ(state().idle_name, "spin+futex");
}

} // namespace
