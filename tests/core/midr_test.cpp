// MIDR decoding for every row of tests/data/midr.csv, and the arm64 probe
// from synthetic HWCAP/MIDR/CTR values.
#include <gtest/gtest.h>
#include <fstream>
#include <sstream>
#include "common/cpuid_dump.h"

using namespace uarch;

namespace {

struct MidrRow {
	uint32_t implementer, part;
	std::string name;
	uint64_t midr;
};

std::vector<MidrRow> midr_rows()
{
	std::ifstream in(uarch::test::testdata("midr.csv"));
	std::vector<MidrRow> rows;
	std::string line;
	while (std::getline(in, line)) {
		if (line.empty() || line[0] == '#' || line.rfind("implementer", 0) == 0)
			continue;
		std::vector<std::string> f;
		std::stringstream ss(line);
		for (std::string c; std::getline(ss, c, ',');)
			f.push_back(c);
		if (f.size() != 4)
			continue;
		rows.push_back({uint32_t(std::stoul(f[0], nullptr, 16)), uint32_t(std::stoul(f[1], nullptr, 16)), f[2],
				std::stoull(f[3], nullptr, 16)});
	}
	return rows;
}

TEST(Midr, EveryRowDecodes)
{
	auto rows = midr_rows();
	ASSERT_EQ(rows.size(), 14u);
	for (const auto &r : rows) {
		uint32_t imp, part;
		decode_midr(r.midr, &imp, &part);
		EXPECT_EQ(imp, r.implementer) << r.name;
		EXPECT_EQ(part, r.part) << r.name;
		Core want = Core::other;
		if (r.implementer == 0xc0 && (r.part == 0xac3 || r.part == 0xac4)) want = Core::ampereone;
		else if (r.implementer == 0x41 && r.part == 0xd0c) want = Core::neoverse_n1;
		else if (r.implementer == 0x41 && r.part == 0xd40) want = Core::neoverse_v1;
		else if (r.implementer == 0x41 && r.part == 0xd49) want = Core::neoverse_n2;
		else if (r.implementer == 0x41 && r.part == 0xd4f) want = Core::neoverse_v2;
		else if (r.implementer == 0x46 && r.part == 0x001) want = Core::a64fx;
		EXPECT_EQ(core_from_midr(imp, part), want) << r.name;
	}
}

TEST(Midr, ProbeReadsMidrOnlyWithHwcapCpuid)
{
	const uint64_t asimd = 1 << 1, cpuid = 1 << 11;
	Cpu c;
	probe_arm(&c, asimd | cpuid, 0, 0xc00fac30, 0x8444c004);
	EXPECT_EQ(c.core, Core::ampereone);
	EXPECT_EQ(c.implementer, 0xc0u);
	EXPECT_EQ(c.part, 0xac3u);
	EXPECT_EQ(c.cache.line, 64u);   // CTR_EL0.DminLine = 4 -> 16 words
	// Without HWCAP_CPUID the MIDR handed in is ignored (it was never read).
	probe_arm(&c, asimd, 0, 0xc00fac30, 0);
	EXPECT_EQ(c.core, Core::other);
	EXPECT_EQ(c.midr, 0u);
	EXPECT_FALSE(c.has(f_cpuid));
}

TEST(Midr, Hwcap2Features)
{
	Cpu c;
	probe_arm(&c, 1 << 1, (1ull << 43) | (1ull << 31), 0, 0);
	EXPECT_TRUE(c.has(f_mops));
	EXPECT_TRUE(c.has(f_wfxt));
	EXPECT_TRUE(c.has(f_asimd));
}

} // namespace
