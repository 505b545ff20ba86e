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
name:

/* A second hidden name for the function that follows. */
#define UARCH_ALIAS(name)                                                       \
	.globl name;                                                            \
	.hidden name;                                                           \
	.type name, %function;                                                  \
name:

#define UARCH_END(name) .size name, . - name

/* No executable stack for any object built from a .S file. */
#define UARCH_NOTE_GNU_STACK .section .note.GNU-stack, "", %progbits
