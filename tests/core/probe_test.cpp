// The probe, fed every CPUID dump in tests/data/cpuid, decodes exactly the
// vendor, family, model and feature bits of that folder's README table.
#include <gtest/gtest.h>
#include <set>
#include <sstream>
#include <sys/auxv.h>
#include "common/cpuid_dump.h"

using namespace uarch;
using uarch::test::probe_dump;
using uarch::test::testdata;

namespace {

struct Row {
	std::string file, vendor;
	unsigned family, model;
	std::set<std::string> features;
};

std::vector<Row> readme_rows()
{
	std::ifstream in(testdata("cpuid/README.md"));
	std::vector<Row> rows;
	std::string line;
	while (std::getline(in, line)) {
		if (line.rfind("| ", 0) != 0 || line.find(".txt") == std::string::npos)
			continue;
		std::vector<std::string> cells;
		std::stringstream ss(line.substr(1));
		std::string cell;
		while (std::getline(ss, cell, '|')) {
			auto b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
			cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
		}
		if (cells.size() < 5)
			continue;
		Row r{cells[0], cells[1], unsigned(std::stoul(cells[2], nullptr, 16)),
		      unsigned(std::stoul(cells[3], nullptr, 16)), {}};
		std::stringstream fs(cells[4]);
		for (std::string f; fs >> f;)
			r.features.insert(f);
		rows.push_back(r);
	}
	return rows;
}

// The README table's columns: the bits it lists for every CPU.
const char *const table_features[] = {"sse2", "avx", "avx2", "avx512f", "avx512bw", "erms", "fsrm",
				      "fzlrm", "fsrs", "fsrc", "waitpkg", "monitor", "monitorx"};

bool has(const Cpu &c, const std::string &name)
{
	for (uint32_t f = 0; f < f_count; f++)
		if (name == feature_name(f))
			return c.has(Feature(f));
	ADD_FAILURE() << "unknown feature " << name;
	return false;
}

class DumpTest : public ::testing::TestWithParam<Row> {};

TEST_P(DumpTest, DecodesLikeTheTable)
{
	const Row &r = GetParam();
	Cpu c = probe_dump(r.file);
	EXPECT_EQ(c.arch, Arch::x86_64);
	EXPECT_STREQ(c.vendor_id, r.vendor.c_str());
	EXPECT_EQ(c.family, r.family);
	EXPECT_EQ(c.model, r.model);
	for (const char *f : table_features)
		EXPECT_EQ(has(c, f), r.features.count(f) == 1) << f;
	// Every dump names a cache line and an L1d; all but K8-era parts an L2.
	EXPECT_EQ(c.cache.line, 64u);
	EXPECT_GT(c.cache.l1d, 8u * 1024);
	EXPECT_GT(c.cache.l2, 64u * 1024);
}

std::string row_name(const ::testing::TestParamInfo<Row> &i)
{
	std::string n = i.param.file.substr(0, i.param.file.find("_CPUID"));
	for (char &ch : n)
		if (!isalnum(static_cast<unsigned char>(ch)))
			ch = '_';
	return n;
}

INSTANTIATE_TEST_SUITE_P(Dumps, DumpTest, ::testing::ValuesIn(readme_rows()), row_name);

TEST(Probe, TableIsComplete)
{
	EXPECT_EQ(readme_rows().size(), 19u);
}

TEST(Probe, DerivedZenGeneration)
{
	EXPECT_EQ(probe_dump("AuthenticAMD0800F12_K17_Zen_CPUID.txt").zen, Zen::zen1);
	EXPECT_EQ(probe_dump("AuthenticAMD0830F10_K17_Rome_CPUID.txt").zen, Zen::zen2);
	EXPECT_EQ(probe_dump("AuthenticAMD0A00F11_K19_Milan_CPUID1.txt").zen, Zen::zen3);
	EXPECT_EQ(probe_dump("AuthenticAMD0A10F11_K19_Genoa_01_CPUID.txt").zen, Zen::zen4);
	EXPECT_EQ(probe_dump("AuthenticAMD0B00F21_K20_Turin_01_CPUID.txt").zen, Zen::zen5);
	EXPECT_EQ(probe_dump("HygonGenuine0900F11_Hygon_01_CPUID.txt").zen, Zen::zen1);
	EXPECT_EQ(probe_dump("AuthenticAMD0020FF0_K8_Venice_CPUID.txt").zen, Zen::none);
	EXPECT_EQ(probe_dump("GenuineIntel00806F8_SapphireRapids_05_CPUID.txt").zen, Zen::none);
	// Client parts of family 19h/1Ah.
	EXPECT_EQ(zen_generation(Vendor::amd, 0x19, 0x21), Zen::zen3);
	EXPECT_EQ(zen_generation(Vendor::amd, 0x19, 0x61), Zen::zen4);
	EXPECT_EQ(zen_generation(Vendor::amd, 0x17, 0x71), Zen::zen2);
}

TEST(Probe, CacheSizes)
{
	// Leaf 4 (Intel): Sapphire Rapids 48 KiB L1d, 2 MiB L2, 37.5 MiB L3.
	Cpu spr = probe_dump("GenuineIntel00806F8_SapphireRapids_05_CPUID.txt");
	EXPECT_EQ(spr.cache.l1d, 48u * 1024);
	EXPECT_EQ(spr.cache.l2, 2u << 20);
	EXPECT_EQ(spr.cache.l3, 38400u * 1024);
	// Leaf 0x8000001D (AMD): Milan's L3 is 32 MiB per CCX, shared by 16 threads.
	Cpu milan = probe_dump("AuthenticAMD0A00F11_K19_Milan_CPUID1.txt");
	EXPECT_EQ(milan.cache.l1d, 32u * 1024);
	EXPECT_EQ(milan.cache.l2, 512u * 1024);
	EXPECT_EQ(milan.cache.l3, 32u << 20);
	EXPECT_EQ(milan.cache.l3_sharing, 16u);
}

TEST(Probe, FeatureNamesRoundTrip)
{
	std::set<std::string> seen;
	for (uint32_t f = 0; f < f_count; f++) {
		ASSERT_NE(feature_name(f), nullptr);
		EXPECT_TRUE(seen.insert(feature_name(f)).second) << feature_name(f);
	}
	EXPECT_EQ(feature_name(f_count), nullptr);
}

// XCR0 decides: AVX/AVX-512 bits the CPU has but the OS does not enable
// must read as absent.
TEST(Probe, XcrZeroGatesVectorState)
{
	struct NoZmm : uarch::test::CpuidDump {
		using CpuidDump::CpuidDump;
	} d(testdata("cpuid/GenuineIntel00806F8_SapphireRapids_05_CPUID.txt"));
	d.xgetbv0 = [](const CpuidSource *) -> uint64_t { return 0x7; };   // x87, SSE, AVX
	Cpu c;
	probe_x86(&c, &d);
	EXPECT_TRUE(c.has(f_avx2));
	EXPECT_FALSE(c.has(f_avx512f));
	EXPECT_FALSE(c.has(f_avx512bw));
	d.xgetbv0 = [](const CpuidSource *) -> uint64_t { return 0x3; };   // no AVX state
	probe_x86(&c, &d);
	EXPECT_FALSE(c.has(f_avx));
	EXPECT_FALSE(c.has(f_avx2));
}

#if defined(__x86_64__)
// <sys/platform/x86.h>'s, declared here: that header is C only (_Bool),
// and clang++ refuses it.
struct LoaderLeaf {
	unsigned int cpuid_array[4], active_array[4];
};
extern "C" const LoaderLeaf *__x86_get_cpuid_feature_leaf(unsigned int);

// The leaves glibc's loader kept are the CPU's own: the CPU probed through
// its table and through the instruction is the same, field by field.
TEST(Probe, LoaderTableAnswersAsTheCpu)
{
	Cpu hw, loader;
	probe_x86(&hw, cpuid_hardware());
	probe_x86(&loader, cpuid_loader());
	EXPECT_EQ(loader.vendor, hw.vendor);
	EXPECT_EQ(loader.family, hw.family);
	EXPECT_EQ(loader.model, hw.model);
	EXPECT_EQ(loader.stepping, hw.stepping);
	EXPECT_EQ(loader.zen, hw.zen);
	EXPECT_EQ(loader.features, hw.features) << "loader " << std::hex << loader.features << ", cpu " << hw.features;
	EXPECT_EQ(loader.cache.l1d, hw.cache.l1d);
	EXPECT_EQ(loader.cache.l2, hw.cache.l2);
	EXPECT_EQ(loader.cache.l3, hw.cache.l3);
	// glibc 2.33 and later (Debian 12: 2.36) have the table, so the answer
	// above came from it: its leaf 1 is the instruction's (but EBX, which
	// holds the APIC id of the CPU each ran on).
	const LoaderLeaf *t = __x86_get_cpuid_feature_leaf(0);   // CPUID_INDEX_1
	ASSERT_NE(t, nullptr);
	CpuidRegs b = cpuid_hardware()->cpuid(cpuid_hardware(), 1, 0);
	EXPECT_EQ(t->cpuid_array[0], b.eax);
	EXPECT_EQ(t->cpuid_array[2], b.ecx);
	EXPECT_EQ(t->cpuid_array[3], b.edx);
}
#endif

} // namespace
