// Does the library bind what the policy promises for the CPU it runs on?
// Probes the CPU itself (the same pure probe the library uses), runs the
// pure policy with the same tunables, and compares every op with
// uarch_impl(). Run natively, under qemu-x86_64 -cpu <model>, under valgrind
// and as a static-pie: prints the CPU it saw and the bindings, exits 1 on a
// mismatch. "--expect-memcpy=<variant>" also checks the memcpy choice.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/auxv.h>
#include "probe/cpu.h"
#include "select/plan.h"
#include "tunables/tunables.h"
#include "uarch.h"

using namespace uarch;

int main(int argc, char **argv)
{
	const char *expect_memcpy = nullptr;
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "--expect-memcpy=", 16))
			expect_memcpy = argv[i] + 16;

	Cpu cpu;
	probe_host(&cpu, getauxval(AT_HWCAP), getauxval(AT_HWCAP2));
	Tunables t;
	const char *env = getauxval(AT_SECURE) ? nullptr : getenv("UARCH_TUNABLES");
	parse_tunables(env, env ? strlen(env) : 0, &t);
	Plan plan;
	select_plan(cpu, t, &plan);

	std::printf("cpu: %s family 0x%x model 0x%x stepping %u features:", vendor_name(cpu.vendor),
		    cpu.family, cpu.model, cpu.stepping);
	for (uint32_t f = 0; f < f_count; f++)
		if (cpu.has(Feature(f)))
			std::printf(" %s", feature_name(f));
	std::printf("\n");

	int bad = 0;
	for (uint32_t op = 0; op < op_count; op++) {
		std::string want;
		if (op == op_idle_wait) {
			for (uint32_t i = 0; i < plan.idle.nstages; i++) {
				if (i)
					want += '+';
				want += stage_name(plan.idle.stages[i]);
			}
		} else {
			want = impl_name(plan.impl[op]);
		}
		const char *got = uarch_impl(op_name(op));
		std::printf("%s=%s\n", op_name(op), got ? got : "(null)");
		if (!got || want != got) {
			std::printf("# MISMATCH: the policy promises %s=%s\n", op_name(op), want.c_str());
			bad = 1;
		}
	}
	if (expect_memcpy && strcmp(uarch_impl("memcpy"), expect_memcpy) != 0) {
		std::printf("# MISMATCH: expected memcpy=%s for this CPU model\n", expect_memcpy);
		bad = 1;
	}
	std::printf("# %s\n", bad ? "FAILED" : "bindings match the policy");
	return bad;
}
