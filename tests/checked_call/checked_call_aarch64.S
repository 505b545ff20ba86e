// uarch_checked_call(fn, clobbered, a0, a1, a2, a3): calls fn(a0, a1, a2, a3)
// with every callee-saved register (x19-x28, the frame pointer x29, the
// low halves d8-d15) holding a sentinel, and reports in *clobbered what
// the call broke (bits in checked_call.h), the stack pointer included.
// Returns what fn returned.
//
// Plain assembly: AddressSanitizer instruments compiled C/C++ only, so
// nothing here is instrumented and the sentinels never meet ASan code.
// The expected stack pointer lives in a thread-local word (the tests call
// from several threads), so a callee that returns with a wrong one is
// reported and the frame is still found.

#define CC_SP (1 << 19)   // x19..x28: bits 0-9, x29: 10, d8..d15: 11-18

#define SENTINEL(i) (0x5EC0DE0000000000 + 0x0101 * (i))

	.section .tbss,"awT",%nobits
	.p2align 3
	.type uarch_checked_call_sp, %object
	.size uarch_checked_call_sp, 8
uarch_checked_call_sp:
	.zero 8

	.macro CHECKX reg, i, bit
	ldr x9, =SENTINEL(\i)
	cmp \reg, x9
	cset x10, ne
	orr x14, x14, x10, lsl #\bit
	.endm
	.macro CHECKD reg, i, bit
	fmov x12, \reg
	CHECKX x12, \i, \bit
	.endm
	.macro PLANTD reg, i
	ldr x9, =SENTINEL(\i)
	fmov \reg, x9
	.endm

	.text
	.globl uarch_checked_call
	.type uarch_checked_call, %function
	.p2align 4
uarch_checked_call:
	.cfi_startproc
	stp x29, x30, [sp, #-176]!
	.cfi_def_cfa_offset 176
	.cfi_offset x29, -176
	.cfi_offset x30, -168
	stp x19, x20, [sp, #16]
	stp x21, x22, [sp, #32]
	stp x23, x24, [sp, #48]
	stp x25, x26, [sp, #64]
	stp x27, x28, [sp, #80]
	stp d8, d9, [sp, #96]
	stp d10, d11, [sp, #112]
	stp d12, d13, [sp, #128]
	stp d14, d15, [sp, #144]
	.cfi_offset x19, -160
	.cfi_offset x20, -152
	.cfi_offset x21, -144
	.cfi_offset x22, -136
	.cfi_offset x23, -128
	.cfi_offset x24, -120
	.cfi_offset x25, -112
	.cfi_offset x26, -104
	.cfi_offset x27, -96
	.cfi_offset x28, -88
	.cfi_offset d8, -80
	.cfi_offset d9, -72
	.cfi_offset d10, -64
	.cfi_offset d11, -56
	.cfi_offset d12, -48
	.cfi_offset d13, -40
	.cfi_offset d14, -32
	.cfi_offset d15, -24
	str x1, [sp, #160]               // where the mask goes
	mrs x9, tpidr_el0
	adrp x10, :gottprel:uarch_checked_call_sp
	ldr x10, [x10, #:gottprel_lo12:uarch_checked_call_sp]
	mov x11, sp
	str x11, [x9, x10]
	mov x16, x0
	mov x0, x2
	mov x1, x3
	mov x2, x4
	mov x3, x5
	ldr x19, =SENTINEL(1)
	ldr x20, =SENTINEL(2)
	ldr x21, =SENTINEL(3)
	ldr x22, =SENTINEL(4)
	ldr x23, =SENTINEL(5)
	ldr x24, =SENTINEL(6)
	ldr x25, =SENTINEL(7)
	ldr x26, =SENTINEL(8)
	ldr x27, =SENTINEL(9)
	ldr x28, =SENTINEL(10)
	ldr x29, =SENTINEL(11)
	PLANTD d8, 12
	PLANTD d9, 13
	PLANTD d10, 14
	PLANTD d11, 15
	PLANTD d12, 16
	PLANTD d13, 17
	PLANTD d14, 18
	PLANTD d15, 19
	blr x16
	mov x15, x0                      // the return value, kept here
	mov x14, #0                      // the mask
	mrs x9, tpidr_el0
	adrp x10, :gottprel:uarch_checked_call_sp
	ldr x10, [x10, #:gottprel_lo12:uarch_checked_call_sp]
	ldr x11, [x9, x10]
	mov x12, sp
	cmp x12, x11
	b.eq 1f
	orr x14, x14, #CC_SP
	mov sp, x11
1:	CHECKX x19, 1, 0
	CHECKX x20, 2, 1
	CHECKX x21, 3, 2
	CHECKX x22, 4, 3
	CHECKX x23, 5, 4
	CHECKX x24, 6, 5
	CHECKX x25, 7, 6
	CHECKX x26, 8, 7
	CHECKX x27, 9, 8
	CHECKX x28, 10, 9
	CHECKX x29, 11, 10
	CHECKD d8, 12, 11
	CHECKD d9, 13, 12
	CHECKD d10, 14, 13
	CHECKD d11, 15, 14
	CHECKD d12, 16, 15
	CHECKD d13, 17, 16
	CHECKD d14, 18, 17
	CHECKD d15, 19, 18
	ldr x1, [sp, #160]
	str w14, [x1]
	mov x0, x15
	ldp d14, d15, [sp, #144]
	ldp d12, d13, [sp, #128]
	ldp d10, d11, [sp, #112]
	ldp d8, d9, [sp, #96]
	ldp x27, x28, [sp, #80]
	ldp x25, x26, [sp, #64]
	ldp x23, x24, [sp, #48]
	ldp x21, x22, [sp, #32]
	ldp x19, x20, [sp, #16]
	ldp x29, x30, [sp], #176
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.ltorg
	.size uarch_checked_call, .-uarch_checked_call

	.section .note.GNU-stack,"",%progbits
