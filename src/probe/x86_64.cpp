// x86-64 probe: raw CPUID and XGETBV, nothing else. Pure given its source,
// so tests feed it dumps of other CPUs.
#include "probe/cpu.h"
#include "sys/load_data.h"

namespace uarch {

static inline bool bit(uint32_t r, unsigned b) { return (r >> b) & 1; }

Zen zen_generation(Vendor v, uint32_t family, uint32_t model)
{
	if (v == Vendor::hygon)
		return family == 0x18 ? Zen::zen1 : Zen::none;
	if (v != Vendor::amd)
		return Zen::none;
	switch (family) {
	case 0x17: return model < 0x30 ? Zen::zen1 : Zen::zen2;
	// Family 19h interleaves: 00-0F Milan, 20-5F client Zen 3,
	// 10-1F Genoa, 60-AF client Zen 4 and Bergamo.
	case 0x19: return (model < 0x10 || (model >= 0x20 && model < 0x60)) ? Zen::zen3 : Zen::zen4;
	case 0x1a: return Zen::zen5;
	default: return family > 0x1a ? Zen::zen5 : Zen::none;
	}
}

// Deterministic cache parameters: leaf 4 (Intel, Zhaoxin) or 0x8000001D
// (AMD, Hygon), same layout.
static void caches_from_leaf(Cpu *c, const CpuidSource *src, uint32_t leaf)
{
	// Until the terminating subleaf, or until the L1d, L2 and L3 are all
	// known (caches are listed by level: nothing after the L3 is used).
	for (uint32_t i = 0; i < 16 && !(c->cache.l1d && c->cache.l2 && c->cache.l3); i++) {
		CpuidRegs r = src->cpuid(src, leaf, i);
		uint32_t type = r.eax & 0x1f;
		if (type == 0)
			break;
		if (type == 2)            // instruction cache
			continue;
		uint32_t level = (r.eax >> 5) & 7;
		uint32_t line = (r.ebx & 0xfff) + 1;
		uint32_t size = ((r.ebx >> 22) + 1) * (((r.ebx >> 12) & 0x3ff) + 1) * line * (r.ecx + 1);
		uint32_t sharing = ((r.eax >> 14) & 0xfff) + 1;
		if (level == 1) {
			c->cache.l1d = size;
			c->cache.line = line;
		} else if (level == 2) {
			c->cache.l2 = size;
		} else if (level == 3) {
			c->cache.l3 = size;
			c->cache.l3_sharing = sharing;
		}
	}
}

// What binding needs: vendor, family/model, feature bits (CPUID leaves 0, 1,
// 7.0 and 0x80000001: 4, each a VM exit in a guest). Leaf 7.1 (FSRS,
// FZLRM, FSRC) and the caches only set thresholds: probe_x86_caches.
// cache.line is the CLFLUSH size of leaf 1 until the caches are probed.
void probe_x86_binding(Cpu *c, const CpuidSource *src)
{
	zero(c, sizeof *c);
	c->arch = Arch::x86_64;

	CpuidRegs r = src->cpuid(src, 0, 0);
	uint32_t max_leaf = r.eax;
	c->leaf_max = max_leaf;
	const uint32_t id[3] = {r.ebx, r.edx, r.ecx};
	for (int i = 0; i < 12; i++)
		c->vendor_id[i] = char(id[i / 4] >> (8 * (i % 4)));
	c->vendor_id[12] = 0;
	// "GenuineIntel", "AuthenticAMD", "HygonGenuine", "CentaurHauls", "  Shanghai  "
	if (r.ebx == 0x756e6547 && r.edx == 0x49656e69) c->vendor = Vendor::intel;
	else if (r.ebx == 0x68747541) c->vendor = Vendor::amd;
	else if (r.ebx == 0x6f677948) c->vendor = Vendor::hygon;
	else if (r.ebx == 0x746e6543 || r.ebx == 0x68532020) c->vendor = Vendor::zhaoxin;

	if (max_leaf < 1)
		return;
	r = src->cpuid(src, 1, 0);
	uint32_t base_family = (r.eax >> 8) & 0xf;
	c->family = base_family == 0xf ? base_family + ((r.eax >> 20) & 0xff) : base_family;
	c->model = (r.eax >> 4) & 0xf;
	if (base_family == 0x6 || base_family == 0xf)
		c->model |= ((r.eax >> 16) & 0xf) << 4;
	c->stepping = r.eax & 0xf;
	c->cache.line = ((r.ebx >> 8) & 0xff) * 8;   // CLFLUSH line size, overridden by leaf 4
	if (bit(r.edx, 26)) c->set(f_sse2);
	if (bit(r.ecx, 0)) c->set(f_sse3);
	if (bit(r.ecx, 9)) c->set(f_ssse3);
	if (bit(r.ecx, 19)) c->set(f_sse41);
	if (bit(r.ecx, 20)) c->set(f_sse42);
	if (bit(r.ecx, 3)) c->set(f_monitor);

	// AVX state must be enabled by the OS (XCR0), not only present.
	uint64_t xcr0 = bit(r.ecx, 27) ? src->xgetbv0(src) : 0;   // OSXSAVE
	bool ymm_ok = (xcr0 & 0x6) == 0x6;
	bool zmm_ok = ymm_ok && (xcr0 & 0xe0) == 0xe0;
	if (bit(r.ecx, 28) && ymm_ok) c->set(f_avx);

	if (max_leaf >= 7) {
		r = src->cpuid(src, 7, 0);
		c->leaf7_max = r.eax;
		if (bit(r.ebx, 5) && c->has(f_avx)) c->set(f_avx2);
		if (bit(r.ebx, 8)) c->set(f_bmi2);
		if (bit(r.ebx, 9)) c->set(f_erms);
		if (bit(r.ebx, 23)) c->set(f_clflushopt);
		if (zmm_ok) {
			if (bit(r.ebx, 16)) c->set(f_avx512f);
			if (bit(r.ebx, 30) && bit(r.ebx, 16)) c->set(f_avx512bw);
			if (bit(r.ebx, 31) && bit(r.ebx, 16)) c->set(f_avx512vl);
			if (bit(r.edx, 23) && bit(r.ebx, 16)) c->set(f_avx512fp16);
		}
		if (bit(r.ecx, 5)) c->set(f_waitpkg);
		if (bit(r.edx, 4)) c->set(f_fsrm);
		if (bit(r.edx, 24)) c->set(f_amx_tile);
	}

	// Every x86-64 CPU has leaf 0x80000001 (it holds the long-mode bit):
	// no need to ask 0x80000000 whether it exists.
	r = src->cpuid(src, 0x80000001, 0);
	if (bit(r.ecx, 29)) c->set(f_monitorx);
	if (bit(r.ecx, 8)) c->set(f_prefetchw);
	c->topoext = bit(r.ecx, 22);

	if (c->vendor == Vendor::amd || c->vendor == Vendor::hygon)
		c->zen = zen_generation(c->vendor, c->family, c->model);
}

// Leaf 7.1 and (with caches) the caches, on top of probe_x86_binding's
// answer in *c: only the large-copy thresholds need them, so the library
// asks in its constructor (state.h: complete_plan_at_load), not in its
// resolvers, and never inside a copy. What binding learnt (the largest
// leaves, TOPOEXT) is not asked again: 7.1, then leaf 4 or 0x8000001D once
// per cache up to the L3 (on AMD after 0x80000000), or 0x80000005/6.
void probe_x86_caches(Cpu *c, const CpuidSource *src, bool caches)
{
	if (c->family == 0)   // no leaf 1: nothing more to ask
		return;
	if (c->leaf_max >= 7 && c->leaf7_max >= 1) {
		CpuidRegs r = src->cpuid(src, 7, 1);
		if (bit(r.eax, 10)) c->set(f_fzlrm);
		if (bit(r.eax, 11)) c->set(f_fsrs);
		if (bit(r.eax, 12)) c->set(f_fsrc);
	}
	if (!caches)
		return;
	if (c->vendor == Vendor::amd || c->vendor == Vendor::hygon) {
		CpuidRegs r = src->cpuid(src, 0x80000000, 0);
		uint32_t max_ext = r.eax;
		bool topoext = c->topoext && max_ext >= 0x80000001 && max_ext < 0x8000ffff;
		if (topoext && max_ext >= 0x8000001d) {
			caches_from_leaf(c, src, 0x8000001d);
		} else {
			if (max_ext >= 0x80000005) {
				r = src->cpuid(src, 0x80000005, 0);
				c->cache.l1d = (r.ecx >> 24) * 1024;
				c->cache.line = r.ecx & 0xff;
			}
			if (max_ext >= 0x80000006) {
				r = src->cpuid(src, 0x80000006, 0);
				c->cache.l2 = (r.ecx >> 16) * 1024;
				c->cache.l3 = (r.edx >> 18) * 512 * 1024;
			}
		}
	} else if (c->leaf_max >= 4) {
		caches_from_leaf(c, src, 4);
	}
}

// glibc's loader runs leaf 0 itself and keeps {kind, max_cpuid, family,
// model, stepping} (struct cpu_features_basic; kind 1 Intel, 2 AMD or
// Hygon, 3 Zhaoxin, 4 other), but keeps neither the vendor string nor a
// function that returns them: a program finds the words only by their
// place in its table. Rebuilds leaf 0 from them where they are that
// record: the kind is Intel or AMD (whose vendor strings it names; Zhaoxin
// has two), max_cpuid is plausible (at least 7 where leaf 7 holds
// anything), and family, model and stepping are leaf 1's, derived as glibc
// derives them. Anything else (another layout, another C library) is
// refused, and the caller asks the CPU.
bool loader_leaf0(const uint32_t basic[5], uint32_t leaf1_eax, uint32_t leaf7_any, CpuidRegs *out)
{
	const uint32_t kind = basic[0], max_leaf = basic[1];
	const uint32_t base_family = (leaf1_eax >> 8) & 0xf;
	uint32_t family = base_family, model = (leaf1_eax >> 4) & 0xf;
	if (base_family == 0xf)
		family += (leaf1_eax >> 20) & 0xff;
	if (base_family == 0xf || (kind == 1 && base_family == 0x6))
		model += (leaf1_eax >> 12) & 0xf0;
	if ((kind != 1 && kind != 2) || max_leaf < 1 || max_leaf > 0xff || (leaf7_any && max_leaf < 7) ||
	    basic[2] != family || basic[3] != model || basic[4] != (leaf1_eax & 0xf))
		return false;
	// AMD never used family 0x18: glibc's "AMD" kind there is Hygon.
	if (kind == 1)
		*out = CpuidRegs{max_leaf, 0x756e6547, 0x6c65746e, 0x49656e69};   // "Genu" "ntel" "ineI"
	else if (family == 0x18)
		*out = CpuidRegs{max_leaf, 0x6f677948, 0x656e6975, 0x6e65476e};   // "Hygo" "uine" "nGen"
	else
		*out = CpuidRegs{max_leaf, 0x68747541, 0x444d4163, 0x69746e65};   // "Auth" "cAMD" "enti"
	return true;
}

void probe_x86(Cpu *c, const CpuidSource *src)
{
	probe_x86_binding(c, src);
	probe_x86_caches(c, src);
}

#if defined(__x86_64__)
static uint32_t g_cpuid_count UARCH_LOAD_DATA;
uint32_t cpuid_instructions() { return __atomic_load_n(&g_cpuid_count, __ATOMIC_RELAXED); }

static CpuidRegs hw_cpuid(const CpuidSource *, uint32_t leaf, uint32_t sub)
{
	__atomic_fetch_add(&g_cpuid_count, 1, __ATOMIC_RELAXED);
	CpuidRegs r;
	__asm__ volatile("cpuid" : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx) : "a"(leaf), "c"(sub));
	return r;
}

static uint64_t hw_xgetbv0(const CpuidSource *)
{
	uint32_t lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (uint64_t(hi) << 32) | lo;
}

// The function pointers are filled at run time, not by a load-time
// relocation (see cpu.cpp).
const CpuidSource *cpuid_hardware()
{
	static CpuidSource src UARCH_LOAD_DATA;
	src.cpuid = hw_cpuid;
	src.xgetbv0 = hw_xgetbv0;
	return &src;
}

// glibc's loader asks CPUID once at start-up and keeps the registers of
// leaves 1, 7.0, 0x80000001, 7.1 and a few more, which it hands out through
// __x86_get_cpuid_feature_leaf (glibc 2.33, <sys/platform/x86.h>; in ld.so).
// Asking the loader instead of the CPU saves a VM exit per leaf in a guest
// (4.3-6.5 us each on the Zen 4 and Zen 5 guests measured). The registers
// are CPUID's own (glibc's masks go to the separate "active" words).
// Weak: a static program, musl or an older glibc has none, and an all-zero
// leaf 1 (a table not filled yet) means asking the CPU.
namespace {
struct LoaderLeaf {
	uint32_t cpuid[4];    // eax, ebx, ecx, edx
	uint32_t active[4];
};
}
extern "C" const LoaderLeaf *__x86_get_cpuid_feature_leaf(unsigned int) __attribute__((weak));

static CpuidRegs loader_cpuid(const CpuidSource *self, uint32_t leaf, uint32_t sub)
{
	// glibc's indices: CPUID_INDEX_1 0, _7 1, _80000001 2, _7_ECX_1 6.
	int index = leaf == 1 ? 0 : leaf == 7 && sub == 0 ? 1 : leaf == 0x80000001 ? 2 : leaf == 7 && sub == 1 ? 6 : -1;
	if ((index >= 0 || (leaf == 0 && sub == 0)) && __x86_get_cpuid_feature_leaf) {
		const LoaderLeaf *one = __x86_get_cpuid_feature_leaf(0);
		if (one && (one->cpuid[0] | one->cpuid[1] | one->cpuid[2] | one->cpuid[3])) {
			if (index >= 0) {
				const LoaderLeaf *l = __x86_get_cpuid_feature_leaf(unsigned(index));
				return CpuidRegs{l->cpuid[0], l->cpuid[1], l->cpuid[2], l->cpuid[3]};
			}
			// Leaf 0 has no index: glibc keeps what it learnt of it in
			// the five words its table opens with, right before leaf 1's
			// entry (struct cpu_features: basic, then features[]; glibc
			// 2.33 to 2.40 alike). Taken only where those words agree
			// with leaf 1 (loader_leaf0 checks), else the instruction.
			const uint32_t *basic = reinterpret_cast<const uint32_t *>(uintptr_t(one) - 5 * sizeof(uint32_t));
			const LoaderLeaf *seven = __x86_get_cpuid_feature_leaf(1);
			CpuidRegs r;
			if (loader_leaf0(basic, one->cpuid[0], seven->cpuid[0] | seven->cpuid[1], &r))
				return r;
		}
	}
	return hw_cpuid(self, leaf, sub);
}

const CpuidSource *cpuid_loader()
{
	static CpuidSource src UARCH_LOAD_DATA;
	src.cpuid = loader_cpuid;
	src.xgetbv0 = hw_xgetbv0;
	return &src;
}

void probe_host(Cpu *out, uint64_t, uint64_t)
{
	probe_x86(out, cpuid_hardware());
}

void probe_host_binding(Cpu *out, bool loader)
{
	probe_x86_binding(out, loader ? cpuid_loader() : cpuid_hardware());
}

void probe_host_caches(Cpu *out, bool loader, bool caches)
{
	probe_x86_caches(out, loader ? cpuid_loader() : cpuid_hardware(), caches);
}

// After start-up the loader's copy of the leaves it asked serves (leaf 0
// from its record of it, where that is found: no CPUID at all); a resolver
// may run before the loader filled it.
void probe_host_for_binding(Cpu *out, uint64_t, uint64_t, bool after_startup)
{
	probe_host_binding(out, after_startup);
}

namespace {

// The C library's cache sizes: glibc (2.33 on) measures them once at
// start-up, and sysconf reads them from that record (no CPUID). Weak, and
// called through an opaque pointer as getauxval is; 0 where there is none.
extern "C" long sysconf(int) __attribute__((weak));
long libc_cache(int name)
{
	long (*f)(int) = sysconf;
	__asm__("" : "+r"(f));
	long v = f ? f(name) : 0;
	return v > 0 && v < (1l << 32) ? v : 0;
}

// _SC_LEVEL1_DCACHE_SIZE, _LINESIZE, _SC_LEVEL2_CACHE_SIZE, _SC_LEVEL3_CACHE_SIZE
// (glibc's numbers, as <unistd.h> gives them).
constexpr int sc_l1d = 188, sc_l1d_line = 190, sc_l2 = 191, sc_l3 = 194;

} // namespace

bool probe_host_rest_at_load(Cpu *cpu)
{
	Cache c{};
	c.l1d = uint32_t(libc_cache(sc_l1d));
	c.line = uint32_t(libc_cache(sc_l1d_line));
	c.l2 = uint32_t(libc_cache(sc_l2));
	c.l3 = uint32_t(libc_cache(sc_l3));
	if (c.l1d && c.l2 && c.line) {
		cpu->cache = c;
		// FSRS, FZLRM, FSRC (leaf 7.1): the loader's copy of it.
		Cpu probed = *cpu;
		probe_host_caches(&probed, true, false);
		cpu->features = probed.features;
	} else {
		probe_host_caches(cpu, true, true);
	}
	return true;
}
#endif

} // namespace uarch
