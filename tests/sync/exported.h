// The library's exported barrier and prefetch functions, two ways: looked
// up with dlsym in libuarch.so (what FFI callers do), and called through
// the header compiled with -DUARCH_NO_INLINE (noinline.cpp, linked against
// libuarch.so), which declares them instead of inlining.
#pragma once
#include <stddef.h>

namespace sync_test {

struct Exported {
	const char *how;   // "dlsym", "UARCH_NO_INLINE"
	void (*smp_mb)(void);
	void (*smp_rmb)(void);
	void (*smp_wmb)(void);
	void (*cpu_relax)(void);
	void (*prefetch)(const void *);
	void (*prefetchw)(const void *);
	void (*prefetch_range)(const void *, size_t);
	const char *(*impl)(const char *);
};

// nullptr (with the dlerror text in *why) when the library cannot be loaded.
const Exported *exported_dlsym(const char **why);
const Exported &exported_noinline();

} // namespace sync_test
