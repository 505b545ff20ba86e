/* FEAT_MOPS (Armv8.8/9.3; HWCAP2_MOPS): the CPU picks the strategy for
 * size, alignment and overlap itself. Each copy or set is three
 * instructions - prologue, main, epilogue - that must run in this order
 * with the same registers; the kernel may restart them after an
 * interrupt or migration. cpyp/cpym/cpye have memmove semantics (the
 * cpyf* forms would be forward-only), so memcpy is the same code.
 *
 * Bound only when HWCAP2_MOPS is set; elsewhere these are undefined
 * instructions (SIGILL). x0 dst (kept: the return value), x1 src or c, x2 n.
 */
#include "arch/aarch64/asm.h"

	.arch	armv8-a+mops
	.text

UARCH_FUNC(uarch_aarch64_memmove_mops)
UARCH_ALIAS(uarch_aarch64_memcpy_mops)
	mov	x3, x0
	cpyp	[x3]!, [x1]!, x2!
	cpym	[x3]!, [x1]!, x2!
	cpye	[x3]!, [x1]!, x2!
	ret
UARCH_END(uarch_aarch64_memmove_mops)
UARCH_END(uarch_aarch64_memcpy_mops)

UARCH_FUNC(uarch_aarch64_memset_mops)
	mov	x3, x0
	setp	[x3]!, x2!, x1
	setm	[x3]!, x2!, x1
	sete	[x3]!, x2!, x1
	ret
UARCH_END(uarch_aarch64_memset_mops)

UARCH_NOTE_GNU_STACK
