/* Macros for the arm64 assembly variants (preprocessed .S files). */
#pragma once

/* A hidden function: called only through impl_fn() inside the library.
   It starts a 1 KiB block, so a variant of up to 1 KiB (each is) lies in
   one 4 KiB page: no branch of it is taken into the next page (see
   UARCH_MEM_ENTRY in arch/x86_64/mem.h for what that cost on x86-64). */
#define UARCH_FUNC(name)                                                        \
	.globl name;                                                            \
	.hidden name;                                                           \
	.type name, %function;                                                  \
	.p2align 10;                                                            \
name:	bti c
/* bti c: the landing pad of an indirect call under BTI (a hint, a no-op,
   on CPUs without it; the variants are reached through pointers). */

/* A second hidden name for the function that follows. */
#define UARCH_ALIAS(name)                                                       \
	.globl name;                                                            \
	.hidden name;                                                           \
	.type name, %function;                                                  \
name:	bti c

#define UARCH_END(name) .size name, . - name

/* No executable stack for any object built from a .S file; and the
   object's control-flow properties: every entry has its BTI landing pad,
   and no function saves a return address (leaves: nothing to sign), so
   BTI and PAC hold. (GNU_PROPERTY_AARCH64_FEATURE_1_AND = 0xc0000000,
   bits 0 and 1: BTI, PAC.) */
#define UARCH_NOTE_GNU_STACK                                                    \
	.section .note.GNU-stack, "", %progbits;                                \
	.pushsection .note.gnu.property, "a";                                   \
	.p2align 3;                                                             \
	.word 4, 16, 5;                                                         \
	.asciz "GNU";                                                           \
	.word 0xc0000000, 4, 3, 0;                                              \
	.popsection
