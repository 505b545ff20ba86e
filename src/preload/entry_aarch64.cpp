// arm64 entries of the preload library (entry.cpp binds the dynamic
// symbols at load; these are what objects bound before that call).
//
// Each entry loads its pointer and branches to it (x16: the intra-call
// scratch register, which the procedure call standard lets a veneer
// clobber). Never rewritten.
#include "preload/entry.h"

// Entry i sits at page + entry_stride * i (memcpy, memmove, memset); the
// rest of the page is udf #0.
__asm__(
	"	.pushsection .text.uarch_entry,\"ax\",%progbits\n"
	"	.balign 4096\n"
	"	.globl uarch_preload_entry_page\n"
	"	.hidden uarch_preload_entry_page\n"
	"uarch_preload_entry_page:\n"
	"	.globl memcpy\n"
	"	.type memcpy,%function\n"
	"memcpy:\n"
	"	bti c\n"                            // a call target under BTI (a hint elsewhere)
	"	adrp x16, uarch_preload_ptr+0\n"
	"	ldr x16, [x16, #:lo12:uarch_preload_ptr+0]\n"
	"	br x16\n"
	"	.size memcpy,.-memcpy\n"
	"	.balign 16,0\n"
	"	.globl memmove\n"
	"	.type memmove,%function\n"
	"memmove:\n"
	"	bti c\n"
	"	adrp x16, uarch_preload_ptr+8\n"
	"	ldr x16, [x16, #:lo12:uarch_preload_ptr+8]\n"
	"	br x16\n"
	"	.size memmove,.-memmove\n"
	"	.balign 16,0\n"
	"	.globl memset\n"
	"	.type memset,%function\n"
	"memset:\n"
	"	bti c\n"
	"	adrp x16, uarch_preload_ptr+16\n"
	"	ldr x16, [x16, #:lo12:uarch_preload_ptr+16]\n"
	"	br x16\n"
	"	.size memset,.-memset\n"
	"	.fill 4096-(.-uarch_preload_entry_page),1,0\n"
	"	.popsection\n");
