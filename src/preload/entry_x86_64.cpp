// x86-64 entries of the preload library: what objects bound before the
// load-time binding (entry.cpp) call. Each adds its offset to the
// offset's own address and jumps there: no pointer that needs a
// relocation, so an entry works before ld.so has relocated this library
// (another library's ifunc resolver may copy then). They sit alone on one
// page-aligned page of code, 32 bytes apart; the rest of the page is
// int3. Never rewritten.
#include "preload/entry.h"

// r11: scratch at a call (neither an argument nor preserved).
#define UARCH_ENTRY(name, i)                                                                 \
	"	.globl " #name "\n"                                                          \
	"	.type " #name ",@function\n"                                                 \
	#name ":\n"                                                                        \
	"	endbr64\n"                          /* an indirect-branch target under IBT */ \
	"	lea uarch_preload_off+8*" #i "(%rip), %r11\n"                                 \
	"	add (%r11), %r11\n"                 /* the variant: the slot plus its offset */ \
	"	jmp *%r11\n"                                                                   \
	"	.size " #name ",.-" #name "\n"                                               \
	"	.balign 32,0xcc\n"

__asm__(
#if !defined(UARCH_RECORD)   // the recorder defines the names itself, counting
	"	.pushsection .text.uarch_entry,\"ax\",@progbits\n"
	"	.balign 4096\n"
	"	.globl uarch_preload_entry_page\n"
	"	.hidden uarch_preload_entry_page\n"
	"uarch_preload_entry_page:\n"
	UARCH_ENTRY(memcpy, 0)
	UARCH_ENTRY(memmove, 1)
	UARCH_ENTRY(memset, 2)
	"	.fill 4096-(.-uarch_preload_entry_page),1,0xcc\n"
	"	.popsection\n"
#endif
	// The offsets, in RELRO: written once by the load-time binding, while
	// ld.so relocates this library, read-only from then on. Until then
	// the portable variants, as link-time constants (no relocation).
	"	.pushsection .data.rel.ro.uarch_preload_off,\"aw\",@progbits\n"
	"	.balign 8\n"
	"	.globl uarch_preload_off\n"
	"	.hidden uarch_preload_off\n"
	"uarch_preload_off:\n"
	"	.quad uarch_generic_memcpy - .\n"
	"	.quad uarch_generic_memmove - .\n"
	"	.quad uarch_generic_memset - .\n"
	"	.popsection\n");
