// arm64 probe: AT_HWCAP/AT_HWCAP2 (handed over by the loader), MIDR_EL1 and
// CTR_EL0. Pure given its inputs, so tests feed it every MIDR in the table.
#include "probe/cpu.h"

namespace uarch {

// Linux's uapi/asm/hwcap.h values.
constexpr uint64_t hwcap_asimd = 1ull << 1, hwcap_atomics = 1ull << 8,
		   hwcap_cpuid = 1ull << 11, hwcap_sve = 1ull << 22;
constexpr uint64_t hwcap2_wfxt = 1ull << 31, hwcap2_mops = 1ull << 43;

void decode_midr(uint64_t midr, uint32_t *implementer, uint32_t *part)
{
	*implementer = (midr >> 24) & 0xff;
	*part = (midr >> 4) & 0xfff;
}

Core core_from_midr(uint32_t implementer, uint32_t part)
{
	if (implementer == 0xc0 && (part == 0xac3 || part == 0xac4))
		return Core::ampereone;
	if (implementer == 0x46 && part == 0x001)
		return Core::a64fx;
	if (implementer == 0x41) {
		switch (part) {
		case 0xd0c: return Core::neoverse_n1;
		case 0xd40: return Core::neoverse_v1;
		case 0xd49: return Core::neoverse_n2;
		case 0xd4f: return Core::neoverse_v2;
		}
	}
	return Core::other;
}

void probe_arm(Cpu *c, uint64_t hwcap, uint64_t hwcap2, uint64_t midr, uint64_t ctr)
{
	zero(c, sizeof *c);
	c->arch = Arch::aarch64;
	c->hwcap = hwcap;
	c->hwcap2 = hwcap2;
	if (hwcap & hwcap_asimd) c->set(f_asimd);
	if (hwcap & hwcap_atomics) c->set(f_atomics);
	if (hwcap & hwcap_sve) c->set(f_sve);
	if (hwcap2 & hwcap2_mops) c->set(f_mops);
	if (hwcap2 & hwcap2_wfxt) c->set(f_wfxt);
	if (hwcap & hwcap_cpuid) {
		c->set(f_cpuid);
		c->midr = midr;
		decode_midr(midr, &c->implementer, &c->part);
		c->core = core_from_midr(c->implementer, c->part);
		c->family = c->implementer;
		c->model = c->part;
		c->stepping = midr & 0xf;
		c->vendor = c->implementer == 0x41 ? Vendor::arm : Vendor::unknown;
	}
	// CTR_EL0.DminLine: log2 of the smallest data cache line, in words.
	c->cache.line = ctr ? 4u << ((ctr >> 16) & 0xf) : 64;
}

#if defined(__aarch64__)
void probe_host(Cpu *out, uint64_t hwcap, uint64_t hwcap2)
{
	uint64_t midr = 0, ctr;
	// Reading MIDR_EL1 traps to the kernel, which emulates it only when it
	// advertises HWCAP_CPUID; without it the read would be SIGILL. The value
	// is that of the core this thread runs on now: on a big.LITTLE system
	// another core may differ (the MIDR rules here concern server parts,
	// whose cores are all alike). CTR_EL0 is readable at EL0 on Linux (the
	// kernel traps and emulates it where an erratum needs that).
	if (hwcap & hwcap_cpuid)
		__asm__ volatile("mrs %0, midr_el1" : "=r"(midr));
	__asm__ volatile("mrs %0, ctr_el0" : "=r"(ctr));
	probe_arm(out, hwcap, hwcap2, midr, ctr);
}

void probe_host_for_binding(Cpu *out, uint64_t hwcap, uint64_t hwcap2, bool)
{
	probe_host(out, hwcap, hwcap2);
}

bool probe_host_rest_at_load(Cpu *) { return false; }
#endif

} // namespace uarch
