/* Macros for the arm64 assembly variants (preprocessed .S files). */
#pragma once

/* A hidden function: called only through impl_fn() inside the library. */
#define UARCH_FUNC(name)                                                        \
	.globl name;                                                            \
	.hidden name;                                                           \
	.type name, %function;                                                  \
	.p2align 6;                                                             \
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
