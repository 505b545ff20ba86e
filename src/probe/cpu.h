// What the CPU is, as plain data. Filled by the probe, read by the policy.
// Freestanding: no libc, safe inside an ifunc resolver.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace uarch {

enum class Arch : uint8_t { unknown, x86_64, aarch64 };
enum class Vendor : uint8_t { unknown, intel, amd, hygon, zhaoxin, arm };

// One bit per feature; the order is the order of feature_name().
enum Feature : uint32_t {
	// x86-64
	f_sse2, f_sse3, f_ssse3, f_sse41, f_sse42, f_avx, f_avx2, f_avx512f,
	f_avx512bw, f_avx512vl, f_bmi2, f_erms, f_fsrm, f_fzlrm, f_fsrs, f_fsrc,
	f_monitor, f_waitpkg, f_monitorx, f_prefetchw, f_clflushopt,
	f_amx_tile,   // the CPUID bits alone (core-family markers: AMX and
	f_avx512fp16, // AVX512-FP16 themselves are never used)
	// aarch64
	f_asimd, f_cpuid, f_atomics, f_sve, f_mops, f_wfxt,
	f_count
};

// Lower-case names as uarch-info prints them; nullptr past f_count.
const char *feature_name(uint32_t f);

// Zen generation, derived from family/model (0 = not Zen).
enum class Zen : uint8_t { none, zen1, zen2, zen3, zen4, zen5 };

// arm64 cores the policy knows by MIDR.
enum class Core : uint8_t { other, ampereone, neoverse_n1, neoverse_v1, neoverse_n2, neoverse_v2, a64fx };

struct Cache {
	uint32_t line;          // bytes, 0 = unknown
	uint32_t l1d, l2, l3;   // bytes, 0 = unknown
	uint32_t l3_sharing;    // logical CPUs sharing one L3 (0 = unknown)
};

struct Cpu {
	Arch arch;
	Vendor vendor;
	char vendor_id[13];     // "GenuineIntel", NUL-terminated
	uint32_t family, model, stepping;
	uint64_t features;      // 1 << Feature
	Cache cache;
	Zen zen;
	// x86-64: what binding learnt that the cache probe needs again, so it
	// need not ask: the largest basic leaf, leaf 7's largest subleaf, and
	// 0x80000001's TOPOEXT bit (AMD's leaf 0x8000001D).
	uint32_t leaf_max, leaf7_max;
	bool topoext;
	// arm64
	uint64_t hwcap, hwcap2;
	uint64_t midr;          // 0 when HWCAP_CPUID is absent
	uint32_t implementer, part;
	Core core;
	// Not the hardware but this process's share of it: the logical CPUs
	// its affinity mask allowed when the library loaded (0 = unknown).
	uint32_t cpus_allowed;

	bool has(Feature f) const { return (features >> f) & 1; }
	void set(Feature f) { features |= uint64_t(1) << f; }
	void clear(Feature f) { features &= ~(uint64_t(1) << f); }
};

// Zero-fills without calling memset (the compiler may turn a struct
// initialiser into a call; inside a resolver that call has no target yet).
void zero(void *p, size_t n);

// ---- x86-64 ---------------------------------------------------------------
struct CpuidRegs { uint32_t eax, ebx, ecx, edx; };
// A CPUID source: the instruction itself, or a dump in tests.
struct CpuidSource {
	CpuidRegs (*cpuid)(const CpuidSource *self, uint32_t leaf, uint32_t subleaf);
	uint64_t (*xgetbv0)(const CpuidSource *self);
};
void probe_x86(Cpu *out, const CpuidSource *src);   // both halves below
// What binding needs, at most 6 CPUID leaves (caches unknown, line from
// CLFLUSH); then leaf 7.1 and (caches) the caches, added to the same Cpu.
void probe_x86_binding(Cpu *out, const CpuidSource *src);
void probe_x86_caches(Cpu *inout, const CpuidSource *src, bool caches = true);
// On the real hardware (x86-64 only). loader: take the leaves glibc's
// loader already asked from it (cpuid_loader), only after the loader ran.
void probe_host_binding(Cpu *out, bool loader);
void probe_host_caches(Cpu *inout, bool loader, bool caches = true);
// How many CPUID instructions this process ran through cpuid_hardware()
// and cpuid_loader(): what the tests hold every copy and fill to (none).
uint32_t cpuid_instructions();
const CpuidSource *cpuid_hardware();   // the real instruction (x86-64 only)
// The loader's copy of leaves 1, 7.0, 7.1 and 0x80000001 where glibc's
// ld.so has one (else, and for every other leaf, the instruction).
const CpuidSource *cpuid_loader();
// Leaf 0 rebuilt from glibc's record of it (the five words before its
// table's leaf 1, given leaf 1's EAX and whether leaf 7 holds anything);
// false where the words are not that record.
bool loader_leaf0(const uint32_t basic[5], uint32_t leaf1_eax, uint32_t leaf7_any, CpuidRegs *out);
Zen zen_generation(Vendor v, uint32_t family, uint32_t model);

// ---- aarch64 --------------------------------------------------------------
// hwcap/hwcap2 as AT_HWCAP/AT_HWCAP2; midr read only if HWCAP_CPUID.
void probe_arm(Cpu *out, uint64_t hwcap, uint64_t hwcap2, uint64_t midr, uint64_t ctr_el0);
void decode_midr(uint64_t midr, uint32_t *implementer, uint32_t *part);
Core core_from_midr(uint32_t implementer, uint32_t part);
const char *core_name(Core c);
const char *vendor_name(Vendor v);

// The CPU this process runs on (probe of the real hardware). arm64 needs
// hwcap/hwcap2 from the caller (the resolver gets them from the loader).
void probe_host(Cpu *out, uint64_t hwcap, uint64_t hwcap2);

// What the binding at load probes: on x86-64 what binding needs (no cache
// leaves; after_startup: the loader's copy of the leaves it asked), on
// arm64 everything (hwcap/hwcap2 from the resolver).
void probe_host_for_binding(Cpu *out, uint64_t hwcap, uint64_t hwcap2, bool after_startup);
// After every relocation (a constructor): the caches and leaf 7.1 the
// binding left out, from the C library's record of the caches (no CPUID)
// where it has them all, else from CPUID. False where nothing was left
// out (arm64: probe_host_for_binding read them).
bool probe_host_rest_at_load(Cpu *inout);

} // namespace uarch
