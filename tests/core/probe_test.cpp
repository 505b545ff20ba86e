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

// glibc's record of each dumped CPU, made as its loader makes it (kind
// from the vendor string, Hygon counted as AMD; the extended model added
// for family 0xf, and for Intel's family 6 too), rebuilds that CPU's own
// leaf 0, register by register; Zhaoxin's and other kinds are refused.
TEST_P(DumpTest, LeafZeroFromTheLoadersRecord)
{
	uarch::test::CpuidDump d(testdata("cpuid/" + GetParam().file));
	ASSERT_TRUE(d.ok);
	CpuidRegs l0 = d.cpuid(&d, 0, 0), l1 = d.cpuid(&d, 1, 0), l7 = d.cpuid(&d, 7, 0);
	if (l0.eax < 7)
		l7 = CpuidRegs{0, 0, 0, 0};   // glibc leaves leaf 7 zero there
	const std::string v = GetParam().vendor;
	uint32_t kind = v == "GenuineIntel" ? 1 : v == "AuthenticAMD" || v == "HygonGenuine" ? 2
		      : v == "CentaurHauls" || v == "  Shanghai  " ? 3 : 4;
	uint32_t family = (l1.eax >> 8) & 0xf, model = (l1.eax >> 4) & 0xf, ext_model = (l1.eax >> 12) & 0xf0;
	if (family == 0xf) {
		family += (l1.eax >> 20) & 0xff;
		model += ext_model;
	} else if (kind == 1 && family == 6) {
		model += ext_model;
	}
	const uint32_t basic[5] = {kind, l0.eax, family, model, l1.eax & 0xf};
	CpuidRegs r{};
	bool ok = loader_leaf0(basic, l1.eax, l7.eax | l7.ebx, &r);
	if (kind == 3 || kind == 4) {
		EXPECT_FALSE(ok);
		return;
	}
	ASSERT_TRUE(ok);
	EXPECT_EQ(r.eax, l0.eax);
	EXPECT_EQ(r.ebx, l0.ebx);
	EXPECT_EQ(r.ecx, l0.ecx);
	EXPECT_EQ(r.edx, l0.edx);
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

// Leaf 0 from the words before glibc's table (no CPUID at load): the
// instruction's own answer, register by register, on this machine's CPU.
TEST(Probe, LoaderLeafZeroIsTheCpus)
{
	CpuidRegs hw = cpuid_hardware()->cpuid(cpuid_hardware(), 0, 0);
	CpuidRegs ld = cpuid_loader()->cpuid(cpuid_loader(), 0, 0);
	EXPECT_EQ(ld.eax, hw.eax);
	EXPECT_EQ(ld.ebx, hw.ebx);
	EXPECT_EQ(ld.ecx, hw.ecx);
	EXPECT_EQ(ld.edx, hw.edx);
	// And the words it read are the loader's record, as the loader itself
	// prints it (ld.so --list-diagnostics, glibc 2.33 and later). Under
	// qemu-user the child ld.so runs on the host's CPU, not the emulated
	// one: compared only where it reports this process's family, model
	// and stepping.
	const LoaderLeaf *t = __x86_get_cpuid_feature_leaf(0);
	const uint32_t *basic = reinterpret_cast<const uint32_t *>(uintptr_t(t) - 5 * sizeof(uint32_t));
	FILE *p = popen("/lib64/ld-linux-x86-64.so.2 --list-diagnostics 2>/dev/null", "r");
	ASSERT_NE(p, nullptr);
	const char *names[5] = {"kind", "max_cpuid", "family", "model", "stepping"};
	unsigned long printed[5];
	int seen = 0;
	char line[512];
	while (fgets(line, sizeof line, p))
		for (int i = 0; i < 5; i++) {
			std::string key = std::string("x86.cpu_features.basic.") + names[i] + "=";
			if (strncmp(line, key.c_str(), key.size()) == 0) {
				printed[i] = strtoul(line + key.size(), nullptr, 16);
				seen |= 1 << i;
			}
		}
	pclose(p);
	ASSERT_EQ(seen, 31) << "ld.so --list-diagnostics printed no x86.cpu_features.basic";
	Cpu here;
	probe_x86(&here, cpuid_hardware());
	if (printed[2] != here.family || printed[3] != here.model || printed[4] != here.stepping) {
		GTEST_SKIP() << "ld.so --list-diagnostics ran on another CPU (family " << std::hex << printed[2]
			     << " model " << printed[3] << ", here " << here.family << " " << here.model
			     << "): an emulator; its record not compared";
	}
	for (int i = 0; i < 5; i++)
		EXPECT_EQ(printed[i], basic[i]) << names[i];
}
#endif

// What is refused: a record whose words do not match leaf 1, a kind whose
// vendor string the kind does not name, an implausible largest leaf.
TEST(Probe, LoaderLeafZeroRefusesWhatIsNotTheRecord)
{
	const uint32_t zen4 = 0x00a10f11;   // family 0x19 model 0x11 stepping 1
	CpuidRegs r;
	uint32_t good[5] = {2, 0x10, 0x19, 0x11, 1};
	ASSERT_TRUE(loader_leaf0(good, zen4, 1, &r));
	EXPECT_EQ(r.eax, 0x10u);
	EXPECT_EQ(r.ebx, 0x68747541u);   // "Auth"
	uint32_t hygon[5] = {2, 0xd, 0x18, 0x1, 1};
	ASSERT_TRUE(loader_leaf0(hygon, 0x00900f11, 1, &r));
	EXPECT_EQ(r.ebx, 0x6f677948u);   // "Hygo"
	uint32_t spr[5] = {1, 0x20, 6, 0x8f, 8};
	ASSERT_TRUE(loader_leaf0(spr, 0x000806f8, 1, &r));
	EXPECT_EQ(r.ebx, 0x756e6547u);   // "Genu"
	const uint32_t bad[][5] = {
		{3, 0x10, 0x19, 0x11, 1},   // Zhaoxin: CentaurHauls or "  Shanghai  "
		{4, 0x10, 0x19, 0x11, 1},   // other
		{0, 0x10, 0x19, 0x11, 1},   // not filled
		{2, 0, 0x19, 0x11, 1},      // no leaf 1
		{2, 0x1000, 0x19, 0x11, 1}, // implausible
		{2, 0x5, 0x19, 0x11, 1},    // leaf 7 holds bits, max below 7
		{2, 0x10, 0x17, 0x11, 1},   // another family
		{2, 0x10, 0x19, 0x01, 1},   // another model
		{2, 0x10, 0x19, 0x11, 2},   // another stepping
	};
	for (const auto &b : bad)
		EXPECT_FALSE(loader_leaf0(b, zen4, 1, &r)) << b[0] << " " << b[1] << " " << b[2] << " " << b[3];
}

} // namespace
