// x86-64 entries of the preload library: what objects bound before the
// load-time binding (entry.cpp) call. Each is `endbr64; jmp *ptr(%rip)`,
// the pointers set at load. They sit alone on one page-aligned page of
// code, 16 bytes apart; the rest of the page is int3. Never rewritten.
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
	"	endbr64\n"                          // an indirect-branch target under IBT
	"	jmp *uarch_preload_ptr+0(%rip)\n"
	"	.size memcpy,.-memcpy\n"
	"	.balign 16,0xcc\n"
	"	.globl memmove\n"
	"	.type memmove,@function\n"
	"memmove:\n"
	"	endbr64\n"
	"	jmp *uarch_preload_ptr+8(%rip)\n"
	"	.size memmove,.-memmove\n"
	"	.balign 16,0xcc\n"
	"	.globl memset\n"
	"	.type memset,@function\n"
	"memset:\n"
	"	endbr64\n"
	"	jmp *uarch_preload_ptr+16(%rip)\n"
	"	.size memset,.-memset\n"
	"	.fill 4096-(.-uarch_preload_entry_page),1,0xcc\n"
	"	.popsection\n");

