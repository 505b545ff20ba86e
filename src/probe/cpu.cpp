// Names and helpers shared by both probes. Tables are char arrays, not
// pointer arrays: a pointer array needs load-time relocations, and the
// resolvers that read it may run before this object is relocated.
#include "probe/cpu.h"

namespace uarch {

static const char feature_names[f_count][12] = {
	"sse2", "sse3", "ssse3", "sse4_1", "sse4_2", "avx", "avx2", "avx512f",
	"avx512bw", "avx512vl", "bmi2", "erms", "fsrm", "fzlrm", "fsrs", "fsrc",
	"monitor", "waitpkg", "monitorx", "prefetchw", "clflushopt",
	"amx_tile", "avx512fp16",
	"asimd", "cpuid", "atomics", "sve", "mops", "wfxt",
};

const char *feature_name(uint32_t f)
{
	return f < f_count ? feature_names[f] : nullptr;
}

// Words where aligned: byte stores made it a third of the instructions
// the preload library runs at load (a Tunables is 1.6 KiB; callgrind,
// /bin/true: 7,775 of 17,854 over an empty preloaded library).
void zero(void *p, size_t n)
{
	typedef uint64_t __attribute__((may_alias)) word;
	unsigned char *b = static_cast<unsigned char *>(p);
	for (; n && (uintptr_t(b) & 7); n--)
		*reinterpret_cast<volatile unsigned char *>(b++) = 0;
	for (; n >= 8; n -= 8, b += 8)
		*reinterpret_cast<volatile word *>(b) = 0;
	while (n--)
		*reinterpret_cast<volatile unsigned char *>(b++) = 0;
}

const char *vendor_name(Vendor v)
{
	switch (v) {
	case Vendor::intel: return "intel";
	case Vendor::amd: return "amd";
	case Vendor::hygon: return "hygon";
	case Vendor::zhaoxin: return "zhaoxin";
	case Vendor::arm: return "arm";
	default: return "unknown";
	}
}

const char *core_name(Core c)
{
	switch (c) {
	case Core::ampereone: return "ampereone";
	case Core::neoverse_n1: return "neoverse-n1";
	case Core::neoverse_v1: return "neoverse-v1";
	case Core::neoverse_n2: return "neoverse-n2";
	case Core::neoverse_v2: return "neoverse-v2";
	case Core::a64fx: return "a64fx";
	default: return "other";
	}
}

} // namespace uarch
