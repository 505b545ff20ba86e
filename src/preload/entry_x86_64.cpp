// x86-64 entries of the preload library: memcpy, memmove and memset, bound
// the way the kernel's static_call binds a call site: patched once.
//
// The three entries live alone on one page-aligned page of code (the
// section below is 4096 bytes long and 4096-aligned, so the linker places
// nothing else on it). Each starts as `jmp *ptr(%rip)`, the pointer first
// holding a function that binds on the first call, which sets the
// pointers to the variants. At the first copy or fill of 256 KiB or more
// (caches_matter_from, when the library also reads the cache sizes: a
// process that does real work) the page is replaced by one whose entries
// are `jmp rel32` straight to the variants:
//   1. the new page is built in an anonymous read-write mapping;
//   2. mprotect makes it read+execute (never writable and executable);
//   3. mremap(MREMAP_FIXED) moves it over the old page in one step, under
//      the kernel's mmap lock: a concurrent caller runs either the old page
//      (whose pointers already hold the variants) or the new one.
// Where the system forbids executable anonymous memory (SELinux
// deny_execmem, PaX MPROTECT, systemd MemoryDenyWriteExecute, a seccomp
// filter) step 2 or 3 fails, the new page is dropped and the pointers
// stay: the binding of before, one indirect jump more.
//
// Why not at load: three mapping system calls and one page fault. On a
// guest whose page-table updates trap (the Zen 5 KVM guest this was
// measured on) that is about 165 us (mmap 15, first touch 12, mprotect 44,
// mremap 92), more than the whole library's load otherwise; a short-lived
// process (a shell script's) would pay it and never win it back.
#include <stddef.h>
#include <stdint.h>
#include "dispatch/state.h"
#include "sys/sys.h"
#include "generic/params.h"
#include "preload/entry.h"

using uarch::Op;

extern "C" {
// Read by the entries' `jmp *` until (or unless) the page is patched
// (defined below, first pointing at the functions that bind on first call).
__attribute__((visibility("hidden"))) extern void *uarch_preload_ptr[3];
// The first byte of the page that holds the entries.
__attribute__((visibility("hidden"))) extern const unsigned char uarch_preload_entry_page[];
}

// Entry i sits at page + 16 * i; the rest of the page is int3.
// Order: memcpy, memmove, memset (as Entry in entry.h).
__asm__(
	"	.pushsection .text.uarch_entry,\"ax\",@progbits\n"
	"	.balign 4096\n"
	"	.globl uarch_preload_entry_page\n"
	"	.hidden uarch_preload_entry_page\n"
	"uarch_preload_entry_page:\n"
	"	.globl memcpy\n"
	"	.type memcpy,@function\n"
	"memcpy:\n"
	"	jmp *uarch_preload_ptr+0(%rip)\n"
	"	.size memcpy,.-memcpy\n"
	"	.balign 16,0xcc\n"
	"	.globl memmove\n"
	"	.type memmove,@function\n"
	"memmove:\n"
	"	jmp *uarch_preload_ptr+8(%rip)\n"
	"	.size memmove,.-memmove\n"
	"	.balign 16,0xcc\n"
	"	.globl memset\n"
	"	.type memset,@function\n"
	"memset:\n"
	"	jmp *uarch_preload_ptr+16(%rip)\n"
	"	.size memset,.-memset\n"
	"	.fill 4096-(.-uarch_preload_entry_page),1,0xcc\n"
	"	.popsection\n");

namespace uarch {

namespace {

constexpr long page_size = 4096;
constexpr uint32_t entry_stride = 16;
constexpr Op entry_op[entry_count] = {op_memcpy, op_memmove, op_memset};

// Raw system calls (the first call may come before the C library is ready).
enum : long { nr_mmap = 9, nr_mprotect = 10, nr_munmap = 11, nr_mremap = 25 };
enum : long { prot_read = 1, prot_write = 2, prot_exec = 4 };
enum : long { map_private = 0x02, map_anonymous = 0x20 };
enum : long { mremap_maymove = 1, mremap_fixed = 2 };
using sys::call6;

bool failed(long ret) { return ret < 0 && ret > -4096; }

// 0: not yet, 1: patching, then EntryBinding::patched or ::pointer.
int g_binding;
// 1 once the pointers hold the variants.
int g_pointers_set;

// Replaces the entry page with one of `jmp rel32` to targets; false (and
// the page untouched) when a target is out of reach or the system refuses
// executable anonymous memory.
bool patch_page(void *const targets[entry_count])
{
	const uintptr_t page = uintptr_t(uarch_preload_entry_page);
	int32_t rel[entry_count];
	for (uint32_t i = 0; i < entry_count; i++) {
		int64_t d = int64_t(uintptr_t(targets[i])) - int64_t(page + i * entry_stride + 5);
		if (!targets[i] || d != int64_t(int32_t(d)))
			return false;
		rel[i] = int32_t(d);
	}
	long fresh = call6(nr_mmap, 0, page_size, prot_read | prot_write, map_private | map_anonymous, -1, 0);
	if (failed(fresh))
		return false;
	// Stores through a volatile pointer: no loop the compiler could turn
	// into a call to memset (the function being bound).
	volatile uint64_t *words = reinterpret_cast<uint64_t *>(fresh);
	for (long i = 0; i < page_size / 8; i++)
		words[i] = 0xcccccccccccccccc;  // int3
	volatile unsigned char *p = reinterpret_cast<unsigned char *>(fresh);
	for (uint32_t i = 0; i < entry_count; i++) {
		volatile unsigned char *e = p + i * entry_stride;
		e[0] = 0xe9;                    // jmp rel32
		for (int b = 0; b < 4; b++)
			e[1 + b] = uint8_t(uint32_t(rel[i]) >> (8 * b));
	}
	if (failed(call6(nr_mprotect, fresh, page_size, prot_read | prot_exec, 0, 0, 0)) ||
	    failed(call6(nr_mremap, fresh, page_size, page_size, mremap_maymove | mremap_fixed, long(page), 0))) {
		call6(nr_munmap, fresh, page_size, 0, 0, 0, 0);
		return false;
	}
	return true;
}

} // namespace

bool bind_entries()
{
	// Every caller stores the pointers (the same values, idempotent): a
	// first call that races with the binder must not find them unset.
	const State *st = state_try();
	if (!st)
		return false;   // being built elsewhere: not now
	for (uint32_t i = 0; i < entry_count; i++)
		__atomic_store_n(&uarch_preload_ptr[i], impl_fn(entry_op[i], st->plan.impl[entry_op[i]]),
				 __ATOMIC_RELEASE);
	__atomic_store_n(&g_pointers_set, 1, __ATOMIC_RELEASE);
	// The patch, at the first copy of caches_matter_from (see the top of the file).
	set_late_binder(patch_entries);
	return true;
}

void patch_entries()
{
	int expected = 0;
	if (!__atomic_compare_exchange_n(&g_binding, &expected, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;   // patched, or being patched: either page jumps to the variants
	if (!bind_entries()) {
		__atomic_store_n(&g_binding, 0, __ATOMIC_RELEASE);   // not yet: a later large copy tries again
		return;
	}
	void *targets[entry_count];
	for (uint32_t i = 0; i < entry_count; i++)
		targets[i] = __atomic_load_n(&uarch_preload_ptr[i], __ATOMIC_ACQUIRE);
	int how = patch_page(targets) ? int(EntryBinding::patched) : int(EntryBinding::pointer);
	__atomic_store_n(&g_binding, how, __ATOMIC_RELEASE);
}

EntryBinding entry_binding()
{
	int b = __atomic_load_n(&g_binding, __ATOMIC_ACQUIRE);
	if (b == int(EntryBinding::patched) || b == int(EntryBinding::pointer))
		return EntryBinding(b);
	return __atomic_load_n(&g_pointers_set, __ATOMIC_ACQUIRE) ? EntryBinding::deferred : EntryBinding::unbound;
}

namespace {

// What the pointers hold before binding: bind, then finish this call
// through the (now set) pointer; or, while the state is being built
// elsewhere (another thread's first call, or the one a signal handler
// interrupted), through the portable variant, without waiting.
template <uint32_t I>
void *entry_fn()
{
	if (bind_entries())
		return __atomic_load_n(&uarch_preload_ptr[I], __ATOMIC_ACQUIRE);
	return impl_fn(entry_op[I], Impl::generic);
}

void *memcpy_first(void *d, const void *s, size_t n)
{
	using F = void *(*)(void *, const void *, size_t);
	return reinterpret_cast<F>(entry_fn<0>())(d, s, n);
}

void *memmove_first(void *d, const void *s, size_t n)
{
	using F = void *(*)(void *, const void *, size_t);
	return reinterpret_cast<F>(entry_fn<1>())(d, s, n);
}

void *memset_first(void *d, int c, size_t n)
{
	using F = void *(*)(void *, int, size_t);
	return reinterpret_cast<F>(entry_fn<2>())(d, c, n);
}

// No constructor: the entries bind at their first call. A process that
// never calls them (true, echo, cat, sh -c exit: about half of a shell
// script's commands) runs no CPUID and reads no /proc file for them.

} // namespace
} // namespace uarch

void *uarch_preload_ptr[3] = {reinterpret_cast<void *>(&uarch::memcpy_first),
			      reinterpret_cast<void *>(&uarch::memmove_first),
			      reinterpret_cast<void *>(&uarch::memset_first)};
