/* arm64 ASIMD memmove/memcpy/memset ("baseline" on arm64).
 *
 * Size classes, each branch-free inside:
 *   0..3, 4..7, 8..16      first and last bytes/words/doublewords
 *   17..32, 33..64, 65..128  16/32/64 bytes from the start and from the end
 * Every load of a class comes before its first store, so overlapping
 * buffers are copied as memmove requires, in either direction.
 * Above 128 bytes: a 64-byte loop of ldp/stp q registers with 16-byte
 * aligned stores; forward unless dst lies inside (src, src + n). The first
 * 16 and the last 64 bytes (or mirror-image) are loaded before anything is
 * stored and written around the loop, so the loop needs no remainder code.
 *
 * x0 dst (kept: the return value), x1 src, x2 n.
 */
#include "arch/aarch64/asm.h"

	.text

UARCH_FUNC(uarch_aarch64_memmove_asimd)
UARCH_ALIAS(uarch_aarch64_memcpy_asimd)
	add	x4, x1, x2		/* src end */
	add	x5, x0, x2		/* dst end */
	cmp	x2, #16
	b.hi	.Lmove_over16
	cmp	x2, #8
	b.lo	.Lmove_under8
	ldr	x6, [x1]
	ldr	x7, [x4, #-8]
	str	x6, [x0]
	str	x7, [x5, #-8]
	ret
.Lmove_under8:
	cmp	x2, #4
	b.lo	.Lmove_under4
	ldr	w6, [x1]
	ldr	w7, [x4, #-4]
	str	w6, [x0]
	str	w7, [x5, #-4]
	ret
.Lmove_under4:
	cbz	x2, .Lmove_ret
	/* bytes 0, n/2 and n-1 cover n = 1, 2 and 3 */
	lsr	x8, x2, #1
	ldrb	w6, [x1]
	ldrb	w7, [x4, #-1]
	ldrb	w9, [x1, x8]
	strb	w6, [x0]
	strb	w9, [x0, x8]
	strb	w7, [x5, #-1]
.Lmove_ret:
	ret

.Lmove_over16:
	cmp	x2, #32
	b.hi	.Lmove_over32
	ldr	q0, [x1]
	ldr	q1, [x4, #-16]
	str	q0, [x0]
	str	q1, [x5, #-16]
	ret
.Lmove_over32:
	cmp	x2, #64
	b.hi	.Lmove_over64
	ldp	q0, q1, [x1]
	ldp	q2, q3, [x4, #-32]
	stp	q0, q1, [x0]
	stp	q2, q3, [x5, #-32]
	ret
.Lmove_over64:
	cmp	x2, #128
	b.hi	.Lmove_large
	ldp	q0, q1, [x1]
	ldp	q2, q3, [x1, #32]
	ldp	q4, q5, [x4, #-64]
	ldp	q6, q7, [x4, #-32]
	stp	q0, q1, [x0]
	stp	q2, q3, [x0, #32]
	stp	q4, q5, [x5, #-64]
	stp	q6, q7, [x5, #-32]
	ret

.Lmove_large:
	sub	x6, x0, x1
	cmp	x6, x2
	b.lo	.Lmove_backward		/* dst - src < n (unsigned): dst inside src */

	/* Forward. A store to dst + k can only clobber source bytes below
	 * src + k, which have all been loaded by then. */
	ldr	q16, [x1]		/* head: dst[0, 16) */
	ldp	q20, q21, [x4, #-64]	/* tail: dst[n - 64, n) */
	ldp	q22, q23, [x4, #-32]
	and	x6, x0, #15
	mov	x7, #16
	sub	x6, x7, x6		/* 1..16 bytes to the next aligned dst */
	add	x3, x0, x6
	add	x1, x1, x6
	sub	x7, x5, x3
	sub	x7, x7, #64		/* bytes the loop must write (> 48) */
	ldp	q0, q1, [x1]		/* block 0, loaded before the head store */
	ldp	q2, q3, [x1, #32]
	str	q16, [x0]
	subs	x7, x7, #64
	b.ls	2f
	/* Invariant: q0-q3 hold src[x1, x1 + 64), not yet stored to x3; x7 + 64
	 * bytes from x3 on are left to the loop; blocks never read past the
	 * source's end (a block starts below src + n - 64). */
1:	stp	q0, q1, [x3]
	stp	q2, q3, [x3, #32]
	ldp	q0, q1, [x1, #64]
	ldp	q2, q3, [x1, #96]
	add	x1, x1, #64
	add	x3, x3, #64
	subs	x7, x7, #64
	b.hi	1b
2:	stp	q0, q1, [x3]
	stp	q2, q3, [x3, #32]
	stp	q20, q21, [x5, #-64]
	stp	q22, q23, [x5, #-32]
	ret

	/* Backward: the mirror image, from the end down; aligned on the dst
	 * end. A store to dst + k clobbers only source bytes above src + k. */
.Lmove_backward:
	cbz	x6, .Lmove_ret		/* dst == src */
	ldr	q16, [x4, #-16]		/* tail: dst[n - 16, n) */
	ldp	q20, q21, [x1]		/* head: dst[0, 64) */
	ldp	q22, q23, [x1, #32]
	and	x6, x5, #15		/* 0..15 bytes above the aligned dst end */
	sub	x3, x5, x6
	sub	x4, x4, x6
	sub	x7, x3, x0
	sub	x7, x7, #64		/* bytes the loop must write (> 48) */
	ldp	q0, q1, [x4, #-64]
	ldp	q2, q3, [x4, #-32]
	str	q16, [x5, #-16]
	subs	x7, x7, #64
	b.ls	2f
1:	stp	q0, q1, [x3, #-64]
	stp	q2, q3, [x3, #-32]
	ldp	q0, q1, [x4, #-128]
	ldp	q2, q3, [x4, #-96]
	sub	x4, x4, #64
	sub	x3, x3, #64
	subs	x7, x7, #64
	b.hi	1b
2:	stp	q0, q1, [x3, #-64]
	stp	q2, q3, [x3, #-32]
	stp	q20, q21, [x0]
	stp	q22, q23, [x0, #32]
	ret
UARCH_END(uarch_aarch64_memmove_asimd)
UARCH_END(uarch_aarch64_memcpy_asimd)

/* memset: the same size classes with one splatted register. x1 = c. */
UARCH_FUNC(uarch_aarch64_memset_asimd)
	dup	v0.16b, w1
	add	x5, x0, x2		/* dst end */
	cmp	x2, #16
	b.hi	.Lset_over16
	cmp	x2, #8
	b.lo	.Lset_under8
	str	d0, [x0]
	str	d0, [x5, #-8]
	ret
.Lset_under8:
	cmp	x2, #4
	b.lo	.Lset_under4
	str	s0, [x0]
	str	s0, [x5, #-4]
	ret
.Lset_under4:
	cbz	x2, .Lset_ret
	lsr	x8, x2, #1
	strb	w1, [x0]
	strb	w1, [x0, x8]
	strb	w1, [x5, #-1]
.Lset_ret:
	ret
.Lset_over16:
	cmp	x2, #32
	b.hi	.Lset_over32
	str	q0, [x0]
	str	q0, [x5, #-16]
	ret
.Lset_over32:
	cmp	x2, #64
	b.hi	.Lset_over64
	stp	q0, q0, [x0]
	stp	q0, q0, [x5, #-32]
	ret
.Lset_over64:
	cmp	x2, #128
	b.hi	.Lset_large
	stp	q0, q0, [x0]
	stp	q0, q0, [x0, #32]
	stp	q0, q0, [x5, #-64]
	stp	q0, q0, [x5, #-32]
	ret
.Lset_large:
	str	q0, [x0]		/* head; the loop starts 16-byte aligned */
	and	x6, x0, #15
	mov	x7, #16
	sub	x6, x7, x6
	add	x3, x0, x6
	sub	x7, x5, x3
	sub	x7, x7, #64		/* bytes the loop must write (> 48) */
	/* Invariant: [x0, x3) is written; x7 + 64 bytes from x3 on are left,
	 * the last 64 of which the two stores after the loop write. */
1:	stp	q0, q0, [x3]
	stp	q0, q0, [x3, #32]
	add	x3, x3, #64
	subs	x7, x7, #64
	b.hi	1b
	stp	q0, q0, [x5, #-64]
	stp	q0, q0, [x5, #-32]
	ret
UARCH_END(uarch_aarch64_memset_asimd)

UARCH_NOTE_GNU_STACK
