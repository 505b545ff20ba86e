/* The AmpereOne copy (seed 002): on AmpereOne (MIDR implementer 0xC0, parts
 * 0xAC3/0xAC4), software prefetches into L2 about 2 KiB ahead of the source
 * made large sequential copies 1.3-1.4x faster, where the hardware
 * prefetcher alone does not run far enough ahead. The kernel patch adds
 * two `prfm pldl2keep` (2048 and 2112 bytes ahead, so two adjacent 64-byte
 * lines) to each 128-byte iteration of its copy loop, for copies of at
 * least a 4 KiB page.
 *
 * Here: forward copies of at least prefetch_copy_min bytes run a 128-byte
 * ldp/stp q-register loop with those two prefetches (prefetch_distance and
 * prefetch_distance + 64 ahead); everything else - smaller copies, and
 * copies that must run backward because dst lies inside the source - is
 * the ASIMD memmove. Prefetches past the source's end are harmless: prfm
 * never faults.
 *
 * x0 dst (kept: the return value), x1 src, x2 n.
 */
#include "arch/aarch64/asm.h"

	.text

UARCH_FUNC(uarch_aarch64_memcpy_ampereone)
	adrp	x9, uarch_aarch64_mem_params
	add	x9, x9, :lo12:uarch_aarch64_mem_params
	ldp	x10, x11, [x9]		/* prefetch_copy_min (>= 256 or 0), prefetch_distance */
	sub	x10, x10, #1		/* 0 ("never") wraps to the largest size */
	cmp	x2, x10
	b.ls	uarch_aarch64_memmove_asimd	/* n < prefetch_copy_min */
	sub	x6, x0, x1
	cmp	x6, x2
	b.lo	uarch_aarch64_memmove_asimd	/* dst inside the source: backward */

	add	x12, x11, #64		/* the second prefetch, one line further */
	add	x4, x1, x2		/* src end */
	add	x5, x0, x2		/* dst end */
	ldr	q16, [x1]		/* head: dst[0, 16) */
	ldp	q24, q25, [x4, #-128]	/* tail: dst[n - 128, n) */
	ldp	q26, q27, [x4, #-96]
	ldp	q28, q29, [x4, #-64]
	ldp	q30, q31, [x4, #-32]
	and	x6, x0, #15
	mov	x7, #16
	sub	x6, x7, x6		/* 1..16 bytes to the next aligned dst */
	add	x3, x0, x6
	add	x1, x1, x6
	sub	x7, x5, x3
	sub	x7, x7, #128		/* bytes the loop must write (> 96 as n >= 256) */
	ldp	q0, q1, [x1]		/* block 0, loaded before the head store */
	ldp	q2, q3, [x1, #32]
	ldp	q4, q5, [x1, #64]
	ldp	q6, q7, [x1, #96]
	str	q16, [x0]
	subs	x7, x7, #128
	b.ls	2f
	/* Invariant: q0-q7 hold src[x1, x1 + 128), not yet stored to x3; x7 +
	 * 128 bytes from x3 on are left to the loop; a block starts below
	 * src + n - 128, so no load passes the source's end. */
	.p2align 6
1:	prfm	pldl2keep, [x1, x11]
	prfm	pldl2keep, [x1, x12]
	stp	q0, q1, [x3]
	stp	q2, q3, [x3, #32]
	stp	q4, q5, [x3, #64]
	stp	q6, q7, [x3, #96]
	ldp	q0, q1, [x1, #128]
	ldp	q2, q3, [x1, #160]
	ldp	q4, q5, [x1, #192]
	ldp	q6, q7, [x1, #224]
	add	x1, x1, #128
	add	x3, x3, #128
	subs	x7, x7, #128
	b.hi	1b
2:	stp	q0, q1, [x3]
	stp	q2, q3, [x3, #32]
	stp	q4, q5, [x3, #64]
	stp	q6, q7, [x3, #96]
	stp	q24, q25, [x5, #-128]
	stp	q26, q27, [x5, #-96]
	stp	q28, q29, [x5, #-64]
	stp	q30, q31, [x5, #-32]
	ret
UARCH_END(uarch_aarch64_memcpy_ampereone)

UARCH_NOTE_GNU_STACK
