// The policy pinned for real CPUs: what uarch binds on each.
#include <gtest/gtest.h>
#include "common/cpuid_dump.h"
#include <fstream>
#include <sstream>
#include <vector>
#include "select/plan.h"
#include "select/rules.h"

using namespace uarch;
using uarch::test::probe_dump;

namespace {

Plan plan_for(const Cpu &c, const char *tunables = nullptr)
{
	Tunables t;
	parse_tunables(tunables, tunables ? strlen(tunables) : 0, &t);
	Plan p;
	select_plan(c, t, &p);
	return p;
}

Plan plan_for(const char *dump, const char *tunables = nullptr)
{
	return plan_for(probe_dump(dump), tunables);
}

// HWCAP_ASIMD, HWCAP_EVTSTRM, HWCAP_CPUID: what Linux reports on arm64 servers.
constexpr uint64_t kServerHwcap = (1 << 1) | (1 << 2) | (1 << 11);

Cpu arm(uint64_t midr, uint64_t hwcap2 = 0, uint64_t hwcap = kServerHwcap)
{
	Cpu c;
	probe_arm(&c, hwcap, hwcap2, midr, 0x8444c004);
	return c;
}

struct Pin {
	const char *dump;
	Impl mem;
	bool movsb;      // a rep movsb window exists
	Stage monitor;   // the idle stage between spin and futex (spin: none)
};

const Pin pins[] = {
	{"GenuineIntel00806F8_SapphireRapids_05_CPUID.txt", Impl::avx512, true, Stage::umwait},
	{"GenuineIntel00606A6_ICX_04_CPUID.txt", Impl::avx512, true, Stage::spin},
	{"GenuineIntel0050654_SkylakeX_CPUID.txt", Impl::avx2, true, Stage::spin},
	{"GenuineIntel00306F2_HaswellEP_CPUID.txt", Impl::avx2, true, Stage::spin},
	{"GenuineIntel00006F6_Conroe_CPUID.txt", Impl::gpr, false, Stage::spin},
	{"GenuineIntel00506F1_Denverton_CPUID.txt", Impl::baseline, true, Stage::spin},
	{"GenuineIntel0090661_ElkhartLake_02_CPUID.txt", Impl::baseline, true, Stage::umwait},
	{"GenuineIntel0090672_AlderLake_02_CPUID.txt", Impl::avx512, true, Stage::umwait},
	{"GenuineIntel00A06D1_GraniteRapids_03_CPUID.txt", Impl::avx512, true, Stage::umwait},
	{"GenuineIntel00106A2_Nehalem-EP_CPUID.txt", Impl::baseline, false, Stage::spin},
	{"AuthenticAMD0020FF0_K8_Venice_CPUID.txt", Impl::gpr, false, Stage::spin},
	{"AuthenticAMD0800F12_K17_Zen_CPUID.txt", Impl::avx2, false, Stage::mwaitx},
	{"AuthenticAMD0830F10_K17_Rome_CPUID.txt", Impl::avx2, false, Stage::mwaitx},
	{"AuthenticAMD0A00F11_K19_Milan_CPUID1.txt", Impl::avx2, true, Stage::mwaitx},
	{"AuthenticAMD0A10F11_K19_Genoa_01_CPUID.txt", Impl::avx512, true, Stage::mwaitx},    // decided end to end
	{"AuthenticAMD0B00F21_K20_Turin_01_CPUID.txt", Impl::avx512, true, Stage::mwaitx},
	{"HygonGenuine0900F11_Hygon_01_CPUID.txt", Impl::avx2, false, Stage::mwaitx},
	{"CentaurHauls00307B2_KX6000_01_CPUID.txt", Impl::baseline, false, Stage::spin},
};

class PinTest : public ::testing::TestWithParam<Pin> {};

TEST_P(PinTest, Selection)
{
	const Pin &pin = GetParam();
	Cpu c = probe_dump(pin.dump);
	Plan p = plan_for(c);
	EXPECT_EQ(impl_name(p.impl[op_memcpy]), std::string(impl_name(pin.mem)));
	EXPECT_EQ(p.impl[op_memmove], pin.mem);
	EXPECT_EQ(p.impl[op_memset], pin.mem);
	EXPECT_EQ(p.impl[op_smp_mb], Impl::lock_add);
	EXPECT_EQ(p.impl[op_prefetch_range], Impl::prefetcht0);
	EXPECT_EQ(p.impl[op_prefetchw], c.has(f_prefetchw) ? Impl::prefetchw : Impl::prefetcht0);
	// Whatever is bound must run on the CPU.
	for (uint32_t op = 0; op < op_count; op++)
		EXPECT_TRUE(impl_runs_on(Op(op), p.impl[op], c)) << op_name(op);
	// rep movsb only with ERMS, and only in a proper window.
	bool window = p.mem.movsb_min && p.mem.movsb_min < p.mem.movsb_max;
	EXPECT_EQ(window, pin.movsb);
	if (window)
		EXPECT_TRUE(c.has(f_erms));
	EXPECT_GT(p.mem.nt_min, 256u * 1024);
	// Idle: spin first, futex last, the monitor stage in between if any.
	ASSERT_GE(p.idle.nstages, 2);
	EXPECT_EQ(p.idle.stages[0], Stage::spin);
	EXPECT_EQ(p.idle.stages[p.idle.nstages - 1], Stage::futex);
	if (pin.monitor == Stage::spin)
		EXPECT_EQ(p.idle.nstages, 2);
	else
		EXPECT_EQ(p.idle.stages[1], pin.monitor);
	for (int i = 0; i < p.idle.nstages; i++)
		EXPECT_TRUE(stage_runs_on(p.idle.stages[i], c));
}

std::string pin_name(const ::testing::TestParamInfo<Pin> &i)
{
	std::string n(i.param.dump);
	n = n.substr(0, n.find("_CPUID"));
	for (char &ch : n)
		if (!isalnum(static_cast<unsigned char>(ch)))
			ch = '_';
	return n;
}

INSTANTIATE_TEST_SUITE_P(Cpus, PinTest, ::testing::ValuesIn(pins), pin_name);

TEST(Select, AmpereOneGetsThePrefetchingCopy)
{
	for (uint64_t midr : {0xc00fac30ull, 0xc01fac40ull}) {
		Plan p = plan_for(arm(midr));
		EXPECT_EQ(p.impl[op_memcpy], Impl::ampereone);
		EXPECT_EQ(p.impl[op_memmove], Impl::baseline);
		EXPECT_EQ(p.impl[op_smp_mb], Impl::dmb);
		EXPECT_EQ(p.mem.prefetch_distance, 2048u);
	}
}

TEST(Select, OtherArmCoresGetBaseline)
{
	for (uint64_t midr : {0x414fd0c1ull /* N1 */, 0x461f0010ull /* A64FX */, 0x410fd4f0ull /* V2 */,
			      0x500f0000ull /* eMAG: implementer 0x50, not 0xc0 */}) {
		Plan p = plan_for(arm(midr));
		EXPECT_EQ(p.impl[op_memcpy], Impl::baseline) << std::hex << midr;
		EXPECT_EQ(p.impl[op_smp_mb], Impl::dmb);
		EXPECT_EQ(p.idle.stages[1], Stage::wfe);
	}
	// MOPS and WFET when HWCAP2 says so (AmpereOne keeps its copy).
	Plan p = plan_for(arm(0x414fd0c1, (1ull << 43) | (1ull << 31)));
	EXPECT_EQ(p.impl[op_memcpy], Impl::mops);
	EXPECT_EQ(p.impl[op_memset], Impl::mops);
	EXPECT_EQ(p.idle.stages[1], Stage::wfet);
	// Without the kernel's event stream (qemu-user) WFE could overrun a
	// timeout: the spin hands straight to the futex.
	p = plan_for(arm(0x414fd0c1, 0, kServerHwcap & ~uint64_t(1 << 2)));
	EXPECT_EQ(p.idle.nstages, 2);
	EXPECT_EQ(p.idle.stages[1], Stage::futex);
}

TEST(Select, TunablesForceAndMask)
{
	const char *spr = "GenuineIntel00806F8_SapphireRapids_05_CPUID.txt";
	EXPECT_EQ(plan_for(spr, "memcpy=baseline").impl[op_memcpy], Impl::baseline);
	EXPECT_EQ(plan_for(spr, "memcpy=baseline").impl[op_memset], Impl::avx512);
	EXPECT_EQ(plan_for(spr, "mask=-avx512").impl[op_memcpy], Impl::avx2);
	EXPECT_EQ(plan_for(spr, "mask=-avx512bw").impl[op_memcpy], Impl::avx2);
	// A variant needs what its compiler target implies: avx512 needs avx2
	// and avx, avx2 needs avx.
	EXPECT_EQ(plan_for(spr, "mask=-avx2").impl[op_memcpy], Impl::baseline);
	EXPECT_EQ(plan_for(spr, "mask=-avx").impl[op_memcpy], Impl::baseline);
	EXPECT_EQ(plan_for(spr, "mask=-avx2:memcpy=avx512").refused, 1u << 1);   // the second entry
	Plan p = plan_for(spr, "mask=-erms");
	EXPECT_EQ(p.mem.movsb_min, 0u);
	EXPECT_EQ(p.mem.stosb_min, 0u);
	p = plan_for(spr, "rep_movsb_threshold=4096:nt_threshold=64M");
	EXPECT_EQ(p.mem.movsb_min, 4096u);
	EXPECT_EQ(p.mem.nt_min, 64u << 20);
	// A variant the CPU lacks is refused, the default stays.
	const char *haswell = "GenuineIntel00306F2_HaswellEP_CPUID.txt";
	p = plan_for(haswell, "memcpy=avx512");
	EXPECT_EQ(p.impl[op_memcpy], Impl::avx2);
	EXPECT_EQ(p.refused, 1u);
	EXPECT_EQ(p.refused_reason[0], refuse_cpu_lacks);
	// Masking a feature off cannot be undone by forcing its variant.
	p = plan_for(spr, "mask=-avx2:memcpy=avx2");
	EXPECT_NE(p.impl[op_memcpy], Impl::avx2);
	EXPECT_EQ(p.refused, 2u);
	// Not for this op / unknown name.
	p = plan_for(spr, "memset=ampereone:smp_mb=avx2:memcpy=fastest");
	EXPECT_EQ(p.refused, 7u);
	EXPECT_EQ(p.refused_reason[0], refuse_not_for_op);
	EXPECT_EQ(p.refused_reason[2], refuse_unknown_variant);
	// Idle stages: only those the CPU has, futex last (or spin alone).
	p = plan_for(haswell, "idle_stages=spin,umwait,futex");
	EXPECT_EQ(p.refused, 1u);
	EXPECT_EQ(p.idle.nstages, 2);
	p = plan_for(spr, "idle_stages=umwait,futex");
	EXPECT_EQ(p.refused, 0u);
	EXPECT_EQ(p.idle.stages[0], Stage::umwait);
	p = plan_for(haswell, "idle_stages=spin");
	EXPECT_EQ(p.idle.nstages, 1);
	p = plan_for(haswell, "idle_stages=futex,spin");
	EXPECT_EQ(p.refused, 1u);
}

// erms (rep movsb/stosb at every size) is for measuring, never a default;
// a tunable binds it where the CPU has ERMS, and nowhere else.
TEST(Select, ErmsOnlyOnRequest)
{
	for (const Pin &pin : pins) {
		Cpu c = probe_dump(pin.dump);
		Plan p = plan_for(c, "memcpy=erms:memset=erms");
		for (Op op : {op_memcpy, op_memmove, op_memset})
			EXPECT_NE(plan_for(c).impl[op], Impl::erms) << pin.dump;
		EXPECT_EQ(p.impl[op_memcpy] == Impl::erms, c.has(f_erms)) << pin.dump;
		EXPECT_EQ(p.impl[op_memset] == Impl::erms, c.has(f_erms)) << pin.dump;
		EXPECT_NE(p.impl[op_memmove], Impl::erms) << pin.dump;
	}
	EXPECT_FALSE(impl_runs_on(op_memcpy, Impl::erms, arm(0x414fd0c1)));
}

TEST(Select, ArmVariantsNeverOnX86)
{
	Cpu c = probe_dump("GenuineIntel00806F8_SapphireRapids_05_CPUID.txt");
	for (Impl i : {Impl::ampereone, Impl::mops, Impl::dmb, Impl::prfm})
		for (uint32_t op = 0; op < op_count; op++)
			EXPECT_FALSE(impl_runs_on(Op(op), i, c));
}

} // namespace

// Non-temporal stores from a quarter of the L3 this core shares (glibc
// 2.38's rule; the per-thread share of glibc 2.36 lost 4 MiB copies on the
// Zen 5 guest, see select.cpp), at least the L2, 3x the L2 without an L3.
TEST(Select, NonTemporalFromAQuarterOfTheL3)
{
	struct Want { const char *dump; uint64_t nt; };
	const Want wants[] = {
		{"AuthenticAMD0B00F21_K20_Turin_01_CPUID.txt", 8u << 20},          // 32 MiB CCX L3
		{"GenuineIntel00306F2_HaswellEP_CPUID.txt", (45u << 20) / 4},
		{"GenuineIntel0090661_ElkhartLake_02_CPUID.txt", 1536u << 10},     // the L2 floor (4 MiB L3)
		{"GenuineIntel00006F6_Conroe_CPUID.txt", 12u << 20},               // no L3: 3x the L2
	};
	for (const Want &w : wants) {
		Cpu c = probe_dump(w.dump);
		Plan p = plan_for(c);
		EXPECT_EQ(p.mem.nt_min, w.nt) << w.dump;
	}
	for (const Pin &pin : pins) {
		Cpu c = probe_dump(pin.dump);
		Plan p = plan_for(c);
		EXPECT_GE(p.mem.nt_min, c.cache.l2) << pin.dump;
		if (c.cache.l3 && c.zen != Zen::zen4) {   // Zen 4: half (measured, below)
			EXPECT_LE(p.mem.nt_min, std::max<uint64_t>(c.cache.l3 / 4, c.cache.l2)) << pin.dump;
		}
		if (p.mem.movsb_min) {
			EXPECT_LE(p.mem.movsb_max, p.mem.nt_min) << pin.dump;
		}
	}
}

// Zen 5 without FSRS: the windows real programs decided against glibc 2.36
// and 2.41 (docs/measurements/policy-evidence.md#zen5).
TEST(Select, Zen5WindowsDecidedEndToEnd)
{
	Cpu c = probe_dump("AuthenticAMD0B00F21_K20_Turin_01_CPUID.txt");
	ASSERT_EQ(c.zen, Zen::zen5);
	Plan p = plan_for(c);
	EXPECT_EQ(p.mem.movsb_min, 2112u);   // glibc 2.36's start with FSRM: from 8 KiB MariaDB lost
	EXPECT_EQ(p.mem.movsb_max, uint64_t(c.cache.l2));   // past it CPython's joins lost
	EXPECT_EQ(p.mem.stosb_min, 2u << 10);
	EXPECT_EQ(p.mem.stosb_max, ~uint64_t(0));   // streaming fills lost to it
	// The guest measured, whose CPUID reports its host's L3s together
	// (508 MiB): a quarter of that, as its glibc takes.
	c.cache.l3 = 508u << 20;
	c.cache.l3_sharing = 0;
	p = plan_for(c);
	EXPECT_EQ(p.mem.nt_min, 127u << 20);
}

// Zen 4 with AVX-512: the windows a real program decided (MariaDB under
// the preload library, CPython slicing; policy-evidence.md#zen4-avx512):
// rep movsb from 8 KiB and rep stosb from 2 KiB, both to the non-temporal
// threshold, streaming from half the CCX's L3.
TEST(Select, Zen4MeasuredWindows)
{
	Cpu g = probe_dump("AuthenticAMD0A10F11_K19_Genoa_01_CPUID.txt");
	ASSERT_EQ(g.zen, Zen::zen4);
	ASSERT_EQ(g.cache.l3, 32u << 20);
	Plan p = plan_for(g);
	EXPECT_EQ(p.mem.movsb_min, 8u << 10);
	EXPECT_EQ(p.mem.movsb_max, 16u << 20);
	EXPECT_EQ(p.mem.stosb_min, 2u << 10);
	EXPECT_EQ(p.mem.stosb_max, 16u << 20);
	EXPECT_EQ(p.mem.nt_min, 16u << 20);
	// The environment closes the fills' window, and opens either at
	// another size.
	p = plan_for(g, "rep_stosb_threshold=0");
	EXPECT_EQ(p.mem.stosb_min, 0u);
	EXPECT_EQ(p.mem.stosb_max, 0u);
	p = plan_for(g, "rep_movsb_threshold=4K:rep_stosb_threshold=2K");
	EXPECT_EQ(p.mem.movsb_min, 4096u);
	EXPECT_EQ(p.mem.stosb_min, 2048u);
	EXPECT_GT(p.mem.movsb_max, p.mem.movsb_min);
	EXPECT_GT(p.mem.stosb_max, p.mem.stosb_min);
	// Without AVX-512 (the avx2 variant, decided end to end on a guest
	// that hides it, policy-evidence.md#zen4): rep movsb from 8 KiB to the
	// L2 size (past it CPython's joins lost), rep stosb from 2 KiB,
	// streaming from a quarter of the L3.
	p = plan_for(g, "mask=-avx512f");
	ASSERT_EQ(p.impl[op_memcpy], Impl::avx2);
	EXPECT_EQ(p.mem.movsb_min, 8u << 10);
	EXPECT_EQ(p.mem.movsb_max, uint64_t(g.cache.l2));
	EXPECT_EQ(p.mem.stosb_min, 2u << 10);
	EXPECT_EQ(p.mem.stosb_max, ~uint64_t(0));
	EXPECT_EQ(p.mem.nt_min, 8u << 20);
	// Nor the SSE2 baseline (not measured): glibc's windows.
	p = plan_for(g, "mask=-avx512f,-avx2");
	ASSERT_EQ(p.impl[op_memcpy], Impl::baseline);
	EXPECT_EQ(p.mem.movsb_min, 2112u);
	EXPECT_EQ(p.mem.stosb_min, 2048u);
	EXPECT_EQ(p.mem.nt_fill_min, p.mem.nt_min);
}

// Fills of other bytes than 0 stream apart from zero fills only where that
// was measured (Zen 4: from twice the L3, with or without AVX-512 or
// ERMS; never where the L3 is unknown); elsewhere they follow nt_min,
// tunable or not, unless nt_fill_threshold says otherwise.
TEST(Select, NonzeroFillsStreamApartOnZen4Only)
{
	Cpu g = probe_dump("AuthenticAMD0A10F11_K19_Genoa_01_CPUID.txt");
	Plan p = plan_for(g);
	EXPECT_EQ(p.mem.nt_min, 16u << 20);
	EXPECT_EQ(p.mem.nt_fill_min, 64u << 20);   // twice the 32 MiB L3
	EXPECT_EQ(plan_for(g, "mask=-avx512f").mem.nt_fill_min, 64u << 20);
	EXPECT_EQ(plan_for(g, "mask=-erms").mem.nt_fill_min, 64u << 20);
	EXPECT_EQ(plan_for(g, "mask=-avx512f,-erms").mem.nt_fill_min, 64u << 20);
	Cpu no_l3 = g;
	no_l3.cache.l3 = 0;
	EXPECT_EQ(plan_for(no_l3).mem.nt_fill_min, 0u);   // never: no evidence without the L3
	p = plan_for(g, "nt_threshold=4M");   // moves copies and zero fills only
	EXPECT_EQ(p.mem.nt_min, 4u << 20);
	EXPECT_EQ(p.mem.nt_fill_min, 64u << 20);
	p = plan_for(g, "nt_fill_threshold=64M:nt_threshold=4M");
	EXPECT_EQ(p.mem.nt_min, 4u << 20);
	EXPECT_EQ(p.mem.nt_fill_min, 64u << 20);
	size_t others = 0;
	for (const Pin &pin : pins) {
		Cpu c = probe_dump(pin.dump);
		if (c.zen == Zen::zen4)
			continue;
		others++;
		p = plan_for(c);
		EXPECT_EQ(p.mem.nt_fill_min, p.mem.nt_min) << pin.dump;
		p = plan_for(c, "nt_threshold=4M");
		EXPECT_EQ(p.mem.nt_fill_min, 4u << 20) << pin.dump;
		p = plan_for(c, "nt_threshold=4M:nt_fill_threshold=0");
		EXPECT_EQ(p.mem.nt_min, 4u << 20) << pin.dump;
		EXPECT_EQ(p.mem.nt_fill_min, 0u) << pin.dump;
		p = plan_for(c, "nt_fill_threshold=32M:nt_threshold=4M");
		EXPECT_EQ(p.mem.nt_fill_min, 32u << 20) << pin.dump;
	}
	EXPECT_GE(others, 10u);
}

// Intel cores with AMX or AVX512-FP16 (Sapphire Rapids and on): the
// windows uarch-tune measured (see select.cpp), whatever the model number.
TEST(Select, SapphireRapidsMeasuredWindows)
{
	for (const char *dump : {"GenuineIntel00806F8_SapphireRapids_05_CPUID.txt",
				 "GenuineIntel00A06D1_GraniteRapids_03_CPUID.txt"}) {
		Cpu c = probe_dump(dump);
		ASSERT_TRUE(c.has(f_amx_tile)) << dump;
		Plan p = plan_for(c);
		EXPECT_EQ(p.mem.movsb_min, 24u << 10) << dump;
		// 8x the 2 MiB L2, or a quarter of the L3 where that is less.
		EXPECT_EQ(p.mem.nt_min, std::min<uint64_t>(16u << 20, c.cache.l3 / 4)) << dump;
		EXPECT_EQ(p.mem.movsb_max, p.mem.nt_min) << dump;
		// rep stosb from 32 KiB to the non-temporal threshold.
		EXPECT_EQ(p.mem.stosb_min, 32u << 10) << dump;
		EXPECT_EQ(p.mem.stosb_max, p.mem.nt_min) << dump;
		EXPECT_EQ(plan_for(c, "rep_stosb_threshold=2K").mem.stosb_min, 2048u) << dump;   // a tunable moves it
		// The guest measured: another model number, a huge reported L3.
		c.model = 0xa7;
		c.cache.l3 = 480u << 20;
		p = plan_for(c);
		EXPECT_EQ(p.mem.movsb_min, 24u << 10) << dump;
		EXPECT_EQ(p.mem.nt_min, 16u << 20) << dump;
		// Either marker alone is enough: an Emerald Rapids guest (6/0xcf)
		// showed AVX512-FP16 and hid AMX.
		ASSERT_TRUE(c.has(f_avx512fp16)) << dump;
		c.model = 0xcf;
		c.cache.l3 = 260u << 20;
		for (const char *one : {"mask=-amx_tile", "mask=-avx512fp16"}) {
			p = plan_for(c, one);
			EXPECT_EQ(p.mem.movsb_min, 24u << 10) << dump << " " << one;
			EXPECT_EQ(p.mem.nt_min, 16u << 20) << dump << " " << one;
			EXPECT_EQ(p.mem.stosb_min, 32u << 10) << dump << " " << one;
			EXPECT_EQ(p.mem.stosb_max, 16u << 20) << dump << " " << one;
		}
		// Without both: glibc's windows.
		p = plan_for(c, "mask=-amx_tile,-avx512fp16");
		EXPECT_EQ(p.mem.movsb_min, 2112u) << dump;
		EXPECT_EQ(p.mem.stosb_min, 2048u) << dump;
	}
	// No other dump has the marker (Ice Lake, Tiger Lake, Alder Lake keep glibc's).
	for (const Pin &pin : pins) {
		Cpu c = probe_dump(pin.dump);
		std::string d(pin.dump);
		bool amx = d.find("SapphireRapids") != std::string::npos || d.find("GraniteRapids") != std::string::npos;
		EXPECT_EQ(c.has(f_amx_tile), amx) << pin.dump;
		// AVX512-FP16 also on Alder Lake (AVX-512 enabled), kept off the rule.
		bool adl = d.find("AlderLake") != std::string::npos;
		EXPECT_EQ(c.has(f_avx512fp16), amx || adl) << pin.dump;
		if (adl)
			EXPECT_EQ(plan_for(c).mem.movsb_min, 2112u) << pin.dump;
	}
}

// A threshold of 0 is "never" in the plan the variants get: a window
// [0, stop) would have run rep movsb/stosb at every large size.
TEST(Select, ZeroThresholdMeansNever)
{
	for (const Pin &pin : pins) {
		Plan p = plan_for(probe_dump(pin.dump), "rep_movsb_threshold=0:rep_stosb_threshold=0");
		EXPECT_EQ(p.mem.movsb_max, 0u) << pin.dump;
		EXPECT_EQ(p.mem.stosb_max, 0u) << pin.dump;
		p = plan_for(probe_dump(pin.dump), "rep_stosb_threshold=0:rep_stosb_stop=1G");
		EXPECT_EQ(p.mem.stosb_max, 0u) << pin.dump;
	}
}

// The rule table of the x86-64 thresholds (src/select/rules.h): every
// row cites a section of the evidence file that exists, every row decides
// for some CPU (no earlier row shadows it), and the first row that holds
// decides, as its comment says.
namespace {

std::string read_text(const std::string &path)
{
	std::ifstream in(path);
	std::stringstream ss;
	ss << in.rdbuf();
	return ss.str();
}

const std::string evidence_prefix = "docs/measurements/policy-evidence.md#";

// The lowest row whose condition holds: the documented precedence.
uint32_t first_holding(const Cpu &c, Impl mem)
{
	for (uint32_t i = 0; i < x86_rule_count; i++)
		if (rule_matches(x86_rules[i].when, c, mem))
			return i;
	return x86_rule_count;
}

struct Input {
	Cpu cpu;
	Impl mem;
};

// CPUs that satisfy row r's condition: its vendor (or each), Zen generation
// (or each), family and each end of its model range, the features it
// needs with each one of those it wants one of, each of its variants.
std::vector<Input> satisfying(const Rule &r)
{
	const Match &m = r.when;
	std::vector<Vendor> vendors{m.vendor};
	if (m.vendor == Vendor::unknown)
		vendors = {Vendor::unknown, Vendor::intel, Vendor::amd, Vendor::hygon, Vendor::zhaoxin};
	std::vector<Zen> zens{m.zen};
	if (m.zen == Zen::none)
		zens = {Zen::none, Zen::zen1, Zen::zen2, Zen::zen3, Zen::zen4, Zen::zen5};
	std::vector<std::pair<uint32_t, uint32_t>> fms{{6, 0x8f}, {0x19, 0x11}};
	if (m.family)
		fms = {{m.family, m.model_lo}, {m.family, m.model_hi}};
	std::vector<uint64_t> features{m.needs};
	for (uint32_t f = 0; f < f_count; f++)
		if (m.any_of & fbit(Feature(f)))
			features.push_back(m.needs | fbit(Feature(f)));
	if (m.any_of)
		features.erase(features.begin());
	std::vector<Impl> mems;
	for (Impl i : {Impl::gpr, Impl::baseline, Impl::avx2, Impl::avx512})
		if (!m.variants || (m.variants & vbit(i)))
			mems.push_back(i);
	std::vector<Input> out;
	for (Vendor v : vendors)
		for (Zen z : zens)
			for (auto fm : fms)
				for (uint64_t f : features)
					for (Impl i : mems) {
						Input in;
						zero(&in.cpu, sizeof in.cpu);
						in.cpu.arch = Arch::x86_64;
						in.cpu.vendor = v;
						in.cpu.zen = z;
						in.cpu.family = fm.first;
						in.cpu.model = fm.second;
						in.cpu.features = f & ~m.lacks;
						in.cpu.cache = Cache{64, 32u << 10, 1u << 20, 32u << 20, 16};
						in.mem = i;
						out.push_back(in);
					}
	return out;
}

TEST(Rules, EveryRowCitesASectionThatExists)
{
	std::string doc = read_text(UARCH_POLICY_EVIDENCE);
	ASSERT_FALSE(doc.empty()) << "cannot read " << UARCH_POLICY_EVIDENCE;
	bool cited[uint32_t(Evidence::count)] = {};
	for (uint32_t i = 0; i < x86_rule_count; i++) {
		uint32_t e = uint32_t(x86_rules[i].evidence);
		ASSERT_LT(e, uint32_t(Evidence::count)) << "row " << i;
		cited[e] = true;
		std::string path(evidence_anchor[e]);
		ASSERT_EQ(path.rfind(evidence_prefix, 0), 0u) << "row " << i << ": " << path;
		std::string id = "<a id=\"" + path.substr(evidence_prefix.size()) + "\"></a>";
		size_t at = doc.find(id);
		EXPECT_NE(at, std::string::npos) << "row " << i << ": no " << id;
		EXPECT_EQ(doc.find(id, at + 1), std::string::npos) << "twice: " << id;
	}
	for (uint32_t e = 0; e < uint32_t(Evidence::count); e++)
		EXPECT_TRUE(cited[e]) << evidence_anchor[e] << " is cited by no row";
}

// The comments of the policy and of the variants cite sections that exist.
TEST(Rules, EveryCitationInTheCodeExists)
{
	std::string doc_path = UARCH_POLICY_EVIDENCE;
	std::string doc = read_text(doc_path);
	std::string root = doc_path.substr(0, doc_path.size() - std::string("docs/measurements/policy-evidence.md").size());
	size_t citations = 0;
	for (const char *src : {"src/select/rules.h", "src/select/select.cpp", "src/select/plan.h",
				"src/arch/x86_64/mem_ladder.h", "src/arch/x86_64/mem_avx512.cpp"}) {
		std::string text = read_text(root + src);
		ASSERT_FALSE(text.empty()) << root + src;
		for (size_t at = text.find(evidence_prefix); at != std::string::npos;
		     at = text.find(evidence_prefix, at + 1)) {
			size_t b = at + evidence_prefix.size(), e = b;
			while (e < text.size() && (isalnum(static_cast<unsigned char>(text[e])) || text[e] == '-'))
				e++;
			std::string id = text.substr(b, e - b);
			EXPECT_NE(doc.find("<a id=\"" + id + "\"></a>"), std::string::npos) << src << " cites #" << id;
			citations++;
		}
	}
	EXPECT_GE(citations, x86_rule_count);
}

TEST(Rules, EveryRowDecidesForSomeCpu)
{
	for (uint32_t r = 0; r < x86_rule_count; r++) {
		bool reached = false;
		for (const Input &in : satisfying(x86_rules[r])) {
			ASSERT_TRUE(rule_matches(x86_rules[r].when, in.cpu, in.mem)) << "row " << r;
			uint32_t got = x86_rule_index(in.cpu, in.mem);
			EXPECT_EQ(got, first_holding(in.cpu, in.mem)) << "row " << r;
			EXPECT_LE(got, r);
			reached |= got == r;
		}
		EXPECT_TRUE(reached) << "row " << r << " (" << evidence_anchor[uint32_t(x86_rules[r].evidence)]
				     << ") is shadowed by the rows before it";
	}
	// The last row holds for every CPU.
	Cpu any;
	zero(&any, sizeof any);
	EXPECT_TRUE(rule_matches(x86_rules[x86_rule_count - 1].when, any, Impl::generic));
}

Evidence row_of(const char *dump, const char *tunables = nullptr)
{
	Cpu c = probe_dump(dump);
	Tunables t;
	parse_tunables(tunables, tunables ? strlen(tunables) : 0, &t);
	Plan p;
	select_plan(c, t, &p);
	c.features &= ~t.mask();
	EXPECT_EQ(x86_rule_index(c, p.impl[op_memcpy]), first_holding(c, p.impl[op_memcpy])) << dump;
	return x86_rules[x86_rule_index(c, p.impl[op_memcpy])].evidence;
}

// The first row that holds decides, where later rows hold too: Alder
// Lake shows the Golden Cove server row's marker, Genoa satisfies both
// Zen 4 rows, the AMD row and the last.
TEST(Rules, TheFirstRowThatHoldsDecides)
{
	const char *adl = "GenuineIntel0090672_AlderLake_02_CPUID.txt";
	Cpu c = probe_dump(adl);
	Impl mem = plan_for(c).impl[op_memcpy];
	uint32_t gcs = 0;
	while (gcs < x86_rule_count && x86_rules[gcs].evidence != Evidence::golden_cove_server)
		gcs++;
	ASSERT_LT(gcs, x86_rule_count);
	EXPECT_TRUE(rule_matches(x86_rules[gcs].when, c, mem));
	EXPECT_LT(x86_rule_index(c, mem), gcs);
	EXPECT_EQ(row_of(adl), Evidence::alder_lake);
	EXPECT_EQ(plan_for(c).mem.movsb_min, 2112u);   // glibc's, not the later row's 24 KiB

	const char *genoa = "AuthenticAMD0A10F11_K19_Genoa_01_CPUID.txt";
	c = probe_dump(genoa);
	uint32_t holding = 0;
	for (uint32_t i = 0; i < x86_rule_count; i++)
		holding += rule_matches(x86_rules[i].when, c, Impl::avx512);
	EXPECT_GE(holding, 4u);
	EXPECT_EQ(row_of(genoa), Evidence::zen4_avx512);
	EXPECT_EQ(row_of(genoa, "mask=-avx512f"), Evidence::zen4);
	EXPECT_EQ(row_of(genoa, "mask=-erms"), Evidence::zen4);
	EXPECT_EQ(row_of(genoa, "mask=-avx512f,-avx2"), Evidence::amd);

	EXPECT_EQ(row_of("AuthenticAMD0B00F21_K20_Turin_01_CPUID.txt"), Evidence::zen5);
	EXPECT_EQ(row_of("AuthenticAMD0A00F11_K19_Milan_CPUID1.txt"), Evidence::zen3);
	EXPECT_EQ(row_of("AuthenticAMD0830F10_K17_Rome_CPUID.txt"), Evidence::amd);
	EXPECT_EQ(row_of("GenuineIntel00806F8_SapphireRapids_05_CPUID.txt"), Evidence::golden_cove_server);
	EXPECT_EQ(row_of("GenuineIntel00A06D1_GraniteRapids_03_CPUID.txt"), Evidence::golden_cove_server);
	EXPECT_EQ(row_of("GenuineIntel00806F8_SapphireRapids_05_CPUID.txt", "mask=-avx512f"), Evidence::defaults);
	EXPECT_EQ(row_of("GenuineIntel00306F2_HaswellEP_CPUID.txt"), Evidence::defaults);
	EXPECT_EQ(row_of("HygonGenuine0900F11_Hygon_01_CPUID.txt"), Evidence::defaults);
	for (const Pin &pin : pins)
		row_of(pin.dump);   // the search is the documented one on every dump
}

} // namespace
