// Loads a CPUID dump (tests/data/cpuid, "CPUID LLLLLLLL: EAX-EBX-ECX-EDX
// [SL ss]") as a CpuidSource, so the probe can be fed CPUs this machine
// is not. Leaves the dump lacks read as zero; XCR0 is what leaf 0xD.0
// says the CPU supports (the dumps carry no XCR0, see their README).
#pragma once
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include "probe/cpu.h"

namespace uarch::test {

struct CpuidDump : CpuidSource {
	std::map<std::pair<uint32_t, uint32_t>, CpuidRegs> leaves;
	bool ok = false;

	explicit CpuidDump(const std::string &path)
	{
		cpuid = [](const CpuidSource *self, uint32_t leaf, uint32_t sub) {
			auto *d = static_cast<const CpuidDump *>(self);
			auto it = d->leaves.find({leaf, sub});
			if (it == d->leaves.end())
				it = d->leaves.find({leaf, 0xffffffff});   // leaf without sub-leaves
			return it == d->leaves.end() ? CpuidRegs{0, 0, 0, 0} : it->second;
		};
		xgetbv0 = [](const CpuidSource *self) {
			CpuidRegs r = self->cpuid(self, 0xd, 0);
			return (uint64_t(r.edx) << 32) | r.eax;
		};
		std::ifstream in(path);
		std::string line;
		std::map<uint32_t, uint32_t> next_sub;   // dumps without [SL ss]: lines in sub-leaf order
		while (std::getline(in, line)) {
			unsigned leaf, a, b, c, d, sub;
			if (std::sscanf(line.c_str(), "CPUID %x: %x-%x-%x-%x", &leaf, &a, &b, &c, &d) != 5)
				continue;
			auto sl = line.find("[SL ");
			if (sl == std::string::npos || std::sscanf(line.c_str() + sl, "[SL %x]", &sub) != 1) {
				sub = next_sub[leaf]++;
				if (sub == 0)   // also the answer for any sub-leaf of a leaf that has none
					leaves[{leaf, 0xffffffff}] = CpuidRegs{a, b, c, d};
			}
			leaves[{leaf, sub}] = CpuidRegs{a, b, c, d};
			ok = true;
		}
		// The OS of the dumped machine is assumed to enable every state
		// leaf 0xD reports (see the dumps' README), so OSXSAVE is on.
		auto l1 = leaves.find({1, 0});
		if (l1 != leaves.end() && leaves.count({0xd, 0})) {
			l1->second.ecx |= 1u << 27;
			leaves[{1, 0xffffffff}] = l1->second;
		}
	}
};

inline std::string testdata(const std::string &rel)
{
	const char *d = std::getenv("UARCH_TESTDATA");
	return std::string(d ? d : "tests/data") + "/" + rel;
}

inline Cpu probe_dump(const std::string &file)
{
	CpuidDump dump(testdata("cpuid/" + file));
	Cpu c;
	probe_x86(&c, &dump);
	return c;
}

} // namespace uarch::test
