// arm64 entries of the preload library (entry.cpp binds the dynamic
// symbols at load; these are what objects bound before that call). Each
// adds its offset to the offset's own address and branches there: no
// pointer that needs a relocation, so an entry works before ld.so has
// relocated this library. x16, x17: the intra-call scratch registers,
// which the procedure call standard lets a veneer clobber. Never
// rewritten.
#include "preload/entry.h"

#define UARCH_ENTRY(name, i)                                                                 \
	"	.globl " #name "\n"                                                          \
	"	.type " #name ",%function\n"                                                 \
	#name ":\n"                                                                        \
	"	bti c\n"                            /* a call target under BTI (a hint elsewhere) */ \
	"	adrp x16, uarch_preload_off+8*" #i "\n"                                       \
	"	add x16, x16, #:lo12:uarch_preload_off+8*" #i "\n"                           \
	"	ldr x17, [x16]\n"                                                              \
	"	add x16, x16, x17\n"                /* the variant: the slot plus its offset */ \
	"	br x16\n"                                                                      \
	"	.size " #name ",.-" #name "\n"                                               \
	"	.balign 32,0\n"

// Entry i sits at page + entry_stride * i (memcpy, memmove, memset); the
// rest of the page is udf #0.
__asm__(
#if !defined(UARCH_RECORD)   // the recorder defines the names itself, counting
	"	.pushsection .text.uarch_entry,\"ax\",%progbits\n"
	"	.balign 4096\n"
	"	.globl uarch_preload_entry_page\n"
	"	.hidden uarch_preload_entry_page\n"
	"uarch_preload_entry_page:\n"
	UARCH_ENTRY(memcpy, 0)
	UARCH_ENTRY(memmove, 1)
	UARCH_ENTRY(memset, 2)
	"	.fill 4096-(.-uarch_preload_entry_page),1,0\n"
	"	.popsection\n"
#endif
	// The offsets, in RELRO (see entry_x86_64.cpp).
	"	.pushsection .data.rel.ro.uarch_preload_off,\"aw\",%progbits\n"
	"	.balign 8\n"
	"	.globl uarch_preload_off\n"
	"	.hidden uarch_preload_off\n"
	"uarch_preload_off:\n"
	"	.xword uarch_generic_memcpy - .\n"
	"	.xword uarch_generic_memmove - .\n"
	"	.xword uarch_generic_memset - .\n"
	"	.popsection\n");
