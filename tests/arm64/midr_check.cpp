// Run under qemu-aarch64 with QEMU_CPU=<cpu>[,midr=<value>] (one Meson test
// per row of tests/data/midr.csv, plus -cpu max and -cpu a64fx): checks that
// the probe decodes the MIDR the emulated CPU reports, and that the library
// this program is linked to (libuarch.so, or libuarch.a) bound memcpy to
// the AmpereOne copy exactly for implementer 0xC0 parts 0xAC3/0xAC4.
//
//   arm64_midr_check <implementer> <part> [<cache line>]   (hex, hex, decimal)
//   arm64_midr_check host                                  (real hardware:
//                                           expectations from the probe itself)
// Prints one line per check; exit status 0 when all pass.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <string>
#include <vector>
#include "probe/cpu.h"
#include "uarch.h"

using namespace uarch;

static int g_failed, g_checked;

static void check(bool ok, const std::string &what)
{
	g_checked++;
	if (!ok)
		g_failed++;
	printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
}

static std::string hex(uint64_t v)
{
	char b[32];
	snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
	return b;
}

// A copy through the exported function must be right whatever it bound to:
// sizes on both sides of the AmpereOne threshold, misaligned, and an
// overlapping one (which the AmpereOne copy hands to the backward path).
static bool copies_ok()
{
	std::vector<unsigned char> src(70000), dst(70000), buf(20000);
	for (size_t i = 0; i < src.size(); i++)
		src[i] = (unsigned char)(i * 131 + (i >> 8));
	for (size_t n : {0, 1, 17, 100, 255, 4095, 4096, 4097, 8192 + 77, 65536 + 3}) {
		memset(dst.data(), 0x5a, dst.size());
		if (uarch_memcpy(dst.data() + 3, src.data() + 1, n) != dst.data() + 3)
			return false;
		if (memcmp(dst.data() + 3, src.data() + 1, n) || dst[2] != 0x5a || dst[3 + n] != 0x5a)
			return false;
	}
	for (size_t i = 0; i < buf.size(); i++)
		buf[i] = (unsigned char)i;
	std::vector<unsigned char> want(buf);
	memmove(want.data() + 40, want.data(), 12000);
	uarch_memcpy(buf.data() + 40, buf.data(), 12000);
	return buf == want;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s <implementer> <part> [<line>] | host\n", argv[0]);
		return 2;
	}
	Cpu c;
	probe_host(&c, getauxval(AT_HWCAP), getauxval(AT_HWCAP2));
	const char *qcpu = getenv("QEMU_CPU");
	printf("QEMU_CPU=%s hwcap=%s hwcap2=%s midr=%s implementer=%s part=%s core=%s line=%u\n",
	       qcpu ? qcpu : "(unset)", hex(c.hwcap).c_str(), hex(c.hwcap2).c_str(), hex(c.midr).c_str(),
	       hex(c.implementer).c_str(), hex(c.part).c_str(), core_name(c.core), c.cache.line);

	uint32_t imp = c.implementer, part = c.part;
	if (strcmp(argv[1], "host") != 0) {
		if (argc < 3) {
			fprintf(stderr, "usage: %s <implementer> <part> [<line>]\n", argv[0]);
			return 2;
		}
		imp = uint32_t(strtoul(argv[1], nullptr, 16));
		part = uint32_t(strtoul(argv[2], nullptr, 16));
		check(c.has(f_cpuid), "HWCAP_CPUID is set, so MIDR_EL1 was read");
		check(c.implementer == imp, "implementer " + hex(c.implementer) + " == " + hex(imp));
		check(c.part == part, "part " + hex(c.part) + " == " + hex(part));
		if (argc > 3) {
			uint32_t line = uint32_t(strtoul(argv[3], nullptr, 10));
			check(c.cache.line == line, "CTR_EL0 line " + std::to_string(c.cache.line) + " == " + argv[3]);
		}
	}
	bool ampere = imp == 0xc0 && (part == 0xac3 || part == 0xac4);
	const char *mc = uarch_impl("memcpy"), *mm = uarch_impl("memmove");
	const char *other = c.has(f_mops) ? "mops" : "baseline";
	check(mc && strcmp(mc, ampere ? "ampereone" : other) == 0,
	      std::string("uarch_impl(\"memcpy\") = ") + (mc ? mc : "NULL") + ", want " + (ampere ? "ampereone" : other));
	check(mm && strcmp(mm, other) == 0,
	      std::string("uarch_impl(\"memmove\") = ") + (mm ? mm : "NULL") + ", want " + other);
	const char *mb = uarch_impl("smp_mb");
	check(mb && strcmp(mb, "dmb_ish") == 0, std::string("uarch_impl(\"smp_mb\") = ") + (mb ? mb : "NULL"));
	check(copies_ok(), "uarch_memcpy copies correctly through the bound variant");
	printf("%d of %d checks passed\n", g_checked - g_failed, g_checked);
	return g_failed ? 1 : 0;
}
