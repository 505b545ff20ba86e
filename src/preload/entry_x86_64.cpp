// x86-64 entries of the preload library (entry.cpp binds the dynamic
// symbols at load; these are what objects bound before that call).
//
// Each entry is `jmp *ptr(%rip)`, the pointers set at load. The page holds
// nothing else (the section below is 4096 bytes long and 4096-aligned, so
// the linker places nothing beside it). At the first copy or fill of
// 256 KiB or more (caches_matter_from, when the library also reads the
// cache sizes: a process that does real work) the page is replaced by one
// whose entries are `jmp rel32` straight to the variants:
//   1. the new page is built in an anonymous read-write mapping;
//   2. mprotect makes it read+execute (never writable and executable);
//   3. mremap(MREMAP_FIXED) moves it over the old page in one step, under
//      the kernel's mmap lock: a concurrent caller runs either the old page
//      (whose pointers already hold the variants) or the new one.
// Not at load: three mapping system calls and one page fault, about
// 165 us on a guest whose page-table updates trap (the Zen 5 KVM guest:
// mmap 15, first touch 12, mprotect 44, mremap 92), for objects that few
// programs have. Where the system refuses executable anonymous memory the
// entries keep their pointers, and so they do in a thread under a seccomp
// filter (thread_unfiltered): a filter may kill the process on any of
// those calls rather than refuse it (OpenSSH's pre-authentication sandbox
// kills on an mprotect asking for PROT_EXEC), and it may have been
// installed at any time since load.
#include <stdint.h>
#include "sys/sys.h"
#include "generic/params.h"
#include "preload/entry.h"

// Entry i sits at page + entry_stride * i (memcpy, memmove, memset); the
// rest of the page is int3.
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
enum : long { nr_mmap = 9, nr_munmap = 11, nr_mremap = 25 };
enum : long { map_private = 0x02, map_anonymous = 0x20 };
enum : long { mremap_maymove = 1, mremap_fixed = 2 };
using namespace sys;

// Whether the calling thread runs under no seccomp filter: its
// /proc/thread-self/status says "Seccomp:" 0. Not readable (no /proc, a
// kernel before 3.17, a filter that refuses the open): false. Read in small
// pieces: this runs inside a memcpy, perhaps on a signal stack.
bool thread_unfiltered()
{
	long fd = open_read("/proc/thread-self/status");
	if (failed(fd))
		return false;
	static constexpr char key[] = "\nSeccomp:";
	constexpr uint32_t key_len = sizeof key - 1;
	char buf[128];
	uint32_t matched = 0;   // the bytes of key just read (all of it: skipping blanks)
	int mode = -1;
	for (long n; mode < 0 && (n = read(fd, buf, sizeof buf)) > 0;) {
		for (long i = 0; i < n && mode < 0; i++) {
			char c = buf[i];
			if (matched < key_len)
				matched = c == key[matched] ? matched + 1 : c == '\n' ? 1 : 0;
			else if (c != ' ' && c != '\t')
				mode = c == '0' ? 0 : 1;
		}
	}
	close(fd);
	return mode == 0;
}

} // namespace

// Entries of `jmp rel32`; false (and the page untouched) when a target is
// out of reach, the thread is under a seccomp filter, or the system
// refuses executable anonymous memory.
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
	if (!thread_unfiltered())
		return false;
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

// The patch, at the first copy of caches_matter_from (see the top).
void arrange_entry_patch() { set_late_binder(patch_entries); }

} // namespace uarch
