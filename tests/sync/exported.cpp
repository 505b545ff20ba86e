#include "exported.h"
#include <dlfcn.h>

namespace sync_test {

const Exported *exported_dlsym(const char **why)
{
	static Exported e;
	static const char *err = nullptr;
	static bool done = false;
	if (!done) {
		done = true;
		void *h = dlopen(UARCH_TEST_LIBUARCH, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			err = dlerror();
		} else {
			e.how = "dlsym";
			e.smp_mb = reinterpret_cast<void (*)()>(dlsym(h, "uarch_smp_mb"));
			e.smp_rmb = reinterpret_cast<void (*)()>(dlsym(h, "uarch_smp_rmb"));
			e.smp_wmb = reinterpret_cast<void (*)()>(dlsym(h, "uarch_smp_wmb"));
			e.cpu_relax = reinterpret_cast<void (*)()>(dlsym(h, "uarch_cpu_relax"));
			e.prefetch = reinterpret_cast<void (*)(const void *)>(dlsym(h, "uarch_prefetch"));
			e.prefetchw = reinterpret_cast<void (*)(const void *)>(dlsym(h, "uarch_prefetchw"));
			e.prefetch_range =
				reinterpret_cast<void (*)(const void *, size_t)>(dlsym(h, "uarch_prefetch_range"));
			e.impl = reinterpret_cast<const char *(*)(const char *)>(dlsym(h, "uarch_impl"));
			if (!e.smp_mb || !e.smp_rmb || !e.smp_wmb || !e.cpu_relax || !e.prefetch ||
			    !e.prefetchw || !e.prefetch_range || !e.impl)
				err = "a symbol is missing from libuarch.so";
		}
	}
	if (why)
		*why = err;
	return err ? nullptr : &e;
}

} // namespace sync_test
