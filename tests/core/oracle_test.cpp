// On the machine itself the probe agrees with cpu_features (an independent
// implementation) on every field both know.
#include <gtest/gtest.h>
#include <sys/auxv.h>
#include "probe/cpu.h"
#if UARCH_HAVE_CPU_FEATURES
#include <cpu_features/cpu_features_cache_info.h>
#include <cpu_features/cpuinfo_x86.h>
#endif

using namespace uarch;

#if UARCH_HAVE_CPU_FEATURES
TEST(Oracle, AgreesWithCpuFeatures)
{
	Cpu c;
	probe_host(&c, getauxval(AT_HWCAP), getauxval(AT_HWCAP2));
	const cpu_features::X86Info info = cpu_features::GetX86Info();
	const auto &f = info.features;
	EXPECT_STREQ(c.vendor_id, info.vendor);
	EXPECT_EQ(int(c.family), info.family);
	EXPECT_EQ(int(c.model), info.model);
	EXPECT_EQ(int(c.stepping), info.stepping);
	struct { Feature ours; bool theirs; } pairs[] = {
		{f_sse2, bool(f.sse2)}, {f_sse3, bool(f.sse3)}, {f_ssse3, bool(f.ssse3)},
		{f_sse41, bool(f.sse4_1)}, {f_sse42, bool(f.sse4_2)}, {f_avx, bool(f.avx)},
		{f_avx2, bool(f.avx2)}, {f_avx512f, bool(f.avx512f)}, {f_avx512bw, bool(f.avx512bw)},
		{f_avx512vl, bool(f.avx512vl)}, {f_bmi2, bool(f.bmi2)}, {f_erms, bool(f.erms)},
		{f_clflushopt, bool(f.clflushopt)},
	};
	for (const auto &p : pairs)
		EXPECT_EQ(c.has(p.ours), p.theirs) << feature_name(p.ours);
	// Cache levels both report.
	const cpu_features::CacheInfo ci = cpu_features::GetX86CacheInfo();
	int matched = 0;
	for (int i = 0; i < ci.size; i++) {
		const auto &l = ci.levels[i];
		if (l.cache_type == cpu_features::CPU_FEATURE_CACHE_INSTRUCTION || l.cache_size <= 0)
			continue;
		uint32_t ours = l.level == 1 ? c.cache.l1d : l.level == 2 ? c.cache.l2 : l.level == 3 ? c.cache.l3 : 0;
		if (l.level >= 1 && l.level <= 3 && (l.cache_type == cpu_features::CPU_FEATURE_CACHE_DATA ||
						     l.cache_type == cpu_features::CPU_FEATURE_CACHE_UNIFIED)) {
			EXPECT_EQ(uint64_t(ours), uint64_t(l.cache_size)) << "L" << l.level;
			EXPECT_EQ(int(c.cache.line), l.line_size) << "L" << l.level;
			matched++;
		}
	}
	std::printf("cpu_features and uarch agree on %d cache levels\n", matched);
}
#else
TEST(Oracle, AgreesWithCpuFeatures)
{
	GTEST_SKIP() << "cpu_features: not available for this architecture/build";
}
#endif
