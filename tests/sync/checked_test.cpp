// Every barrier and prefetch variant this CPU runs, and the exported
// functions both ways (dlsym, UARCH_NO_INLINE), through the checked call:
// no callee-saved register, flag, stack pointer or upper vector state may
// change. Variants the CPU cannot run are reported skipped by name.
#include <gtest/gtest.h>
#include <stdint.h>
#include <stdio.h>
#include <string>
#include <vector>
#include "checked_call.h"
#include "dispatch/state.h"
#include "exported.h"
#include "select/plan.h"
#include "arch_sync.h"

namespace {

// A buffer the prefetches walk: in range, at its edges and past its end
// (prefetch never faults, so any address is a valid argument).
struct Ranges {
	std::vector<char> buf = std::vector<char>(1 << 16);
	std::vector<std::pair<const void *, size_t>> list()
	{
		return {{buf.data(), 0}, {buf.data(), 1}, {buf.data() + 3, 63}, {buf.data(), 4096},
			{buf.data() + 1, buf.size() - 1}, {nullptr, 0}, {nullptr, 64}};
	}
};

void run_variant(uarch::Op op, uarch::Impl impl, void *fn)
{
	std::string name = uarch::impl_name(impl);
	const char *what = uarch::op_name(op);
	Ranges r;
	switch (op) {
	case uarch::op_smp_mb:
		checked::checked_call(name.c_str(), what, 0, reinterpret_cast<void (*)(void)>(fn));
		break;
	case uarch::op_prefetchw:
		for (auto [p, n] : r.list())
			checked::checked_call(name.c_str(), what, n, reinterpret_cast<void (*)(const void *)>(fn), p);
		break;
	case uarch::op_prefetch_range:
		for (auto [p, n] : r.list())
			checked::checked_call(name.c_str(), what, n,
					      reinterpret_cast<void (*)(const void *, size_t)>(fn), p, n);
		break;
	default:
		break;
	}
}

} // namespace

TEST(Checked, SyncVariants)
{
	uarch::Cpu cpu;
	uarch::probe_host(&cpu, 0, 0);
	printf("[ checked  ] %s\n", checked::coverage().c_str());
	int ran = 0;
	for (uarch::Op op : {uarch::op_smp_mb, uarch::op_prefetch_range, uarch::op_prefetchw})
		for (uint32_t i = 1; i < uint32_t(uarch::Impl::count); i++) {
			auto impl = uarch::Impl(i);
			void *fn = uarch::impl_fn(op, impl);
			if (!fn)
				continue;
			if (!uarch::impl_runs_on(op, impl, cpu)) {
				printf("[ skipped  ] %s %s: this CPU cannot run it\n", uarch::op_name(op),
				       uarch::impl_name(impl));
				continue;
			}
			run_variant(op, impl, fn);
			ran++;
		}
#if SYNC_TEST_HAVE_ARCH
	uint32_t saved = uarch::prefetch_stride_shift();
	Ranges r;
	for (uint32_t s = 16; s <= 4096; s *= 2) {
		uarch::set_prefetch_stride(s);
		for (auto [p, n] : r.list())
			checked::checked_call(SYNC_TEST_RANGE_NAME, "prefetch_range", n, SYNC_TEST_RANGE_VARIANT, p, n);
	}
	uarch::set_prefetch_stride(1u << saved);
#endif
	printf("[ checked  ] %d sync variants\n", ran);
	EXPECT_GE(ran, 4);
}

TEST(Checked, Exported)
{
	const char *why = nullptr;
	const sync_test::Exported *dl = sync_test::exported_dlsym(&why);
	ASSERT_NE(dl, nullptr) << why;
	Ranges r;
	for (const sync_test::Exported *e : {dl, &sync_test::exported_noinline()}) {
		std::string how = std::string("exported (") + e->how + ")";
		const char *h = how.c_str();
		checked::checked_call(h, "smp_mb", 0, e->smp_mb);
		checked::checked_call(h, "smp_rmb", 0, e->smp_rmb);
		checked::checked_call(h, "smp_wmb", 0, e->smp_wmb);
		checked::checked_call(h, "cpu_relax", 0, e->cpu_relax);
		for (auto [p, n] : r.list()) {
			checked::checked_call(h, "prefetch", n, e->prefetch, p);
			checked::checked_call(h, "prefetchw", n, e->prefetchw, p);
			checked::checked_call(h, "prefetch_range", n, e->prefetch_range, p, n);
		}
		const char *name = checked::checked_call(h, "impl", 0, e->impl, "memset");
		EXPECT_NE(name, nullptr) << how;
	}
}
