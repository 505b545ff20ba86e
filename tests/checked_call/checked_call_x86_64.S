// uarch_checked_call(fn, clobbered, a0, a1, a2, a3): calls fn(a0, a1, a2, a3)
// with every callee-saved register holding a sentinel, and reports in
// *clobbered what the call broke (bits in checked_call.h): a callee-saved
// register, the direction flag left set, the stack pointer, and - where
// uarch_checked_call_flags allows - upper YMM/ZMM0-15 state left dirty
// (XINUSE bits 2 and 6, read with XGETBV ecx=1 right after the return; the
// trampoline runs vzeroupper before the call so a clean callee reads 0).
// Returns what fn returned.
//
// Plain assembly: AddressSanitizer instruments compiled C/C++ only, so
// nothing here is instrumented and the sentinels never meet ASan code.
// The expected stack pointer lives in a thread-local word (the tests call
// from several threads), so a callee that returns with a wrong one is
// reported and the frame is still found.

#define CC_RBX (1 << 0)
#define CC_RBP (1 << 1)
#define CC_R12 (1 << 2)
#define CC_R13 (1 << 3)
#define CC_R14 (1 << 4)
#define CC_R15 (1 << 5)
#define CC_DF  (1 << 6)
#define CC_SP  (1 << 7)
#define CC_YMM (1 << 8)
#define CC_ZMM (1 << 9)

// Flag bits, set once by checked_call.cpp from CPUID.
#define FLAG_AVX     1   // vzeroupper may run
#define FLAG_XGETBV1 2   // XGETBV with ecx=1 reads XINUSE

// One sentinel per register: unlikely as an address or a count.
#define SENTINEL(i) (0x5EC0DE0000000000 + 0x0101 * (i))

	.section .tbss,"awT",@nobits
	.p2align 3
	.type uarch_checked_call_sp, @object
	.size uarch_checked_call_sp, 8
uarch_checked_call_sp:
	.zero 8

	.bss
	.p2align 2
	.globl uarch_checked_call_flags
	.hidden uarch_checked_call_flags
	.type uarch_checked_call_flags, @object
	.size uarch_checked_call_flags, 4
uarch_checked_call_flags:
	.zero 4

	.macro CHECK reg, i, bit
	movabs $SENTINEL(\i), %r8
	cmp %r8, \reg
	je 1f
	or $\bit, %esi
1:
	.endm

	.text
	.globl uarch_checked_call
	.type uarch_checked_call, @function
	.p2align 4
uarch_checked_call:
	.cfi_startproc
	push %rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	push %rbx
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbx, 0
	push %r12
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %r12, 0
	push %r13
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %r13, 0
	push %r14
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %r14, 0
	push %r15
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %r15, 0
	sub $8, %rsp                     // rsp is 16-byte aligned again
	.cfi_adjust_cfa_offset 8
	mov %rsi, (%rsp)                 // where the mask goes
	mov %rdi, %rax
	movq uarch_checked_call_sp@gottpoff(%rip), %r10
	mov %rsp, %fs:(%r10)
	movabs $SENTINEL(1), %rbx
	movabs $SENTINEL(2), %rbp
	movabs $SENTINEL(3), %r12
	movabs $SENTINEL(4), %r13
	movabs $SENTINEL(5), %r14
	movabs $SENTINEL(6), %r15
	testb $FLAG_AVX, uarch_checked_call_flags(%rip)
	jz 1f
	vzeroupper
1:	mov %rdx, %rdi
	mov %rcx, %rsi
	mov %r8, %rdx
	mov %r9, %rcx
	call *%rax
	mov %rax, %rdi                   // the return value, kept here
	xor %esi, %esi                   // the mask
	movq uarch_checked_call_sp@gottpoff(%rip), %r10
	cmp %fs:(%r10), %rsp
	je 1f
	or $CC_SP, %esi
	mov %fs:(%r10), %rsp
1:	CHECK %rbx, 1, CC_RBX
	CHECK %rbp, 2, CC_RBP
	CHECK %r12, 3, CC_R12
	CHECK %r13, 4, CC_R13
	CHECK %r14, 5, CC_R14
	CHECK %r15, 6, CC_R15
	pushfq
	pop %r8
	test $0x400, %r8d
	jz 1f
	or $CC_DF, %esi
	cld
1:	testb $FLAG_XGETBV1, uarch_checked_call_flags(%rip)
	jz 2f
	mov $1, %ecx
	xgetbv                           // XINUSE & XCR0 in edx:eax
	test $0x04, %eax
	jz 1f
	or $CC_YMM, %esi
1:	test $0x40, %eax
	jz 2f
	or $CC_ZMM, %esi
2:	mov (%rsp), %r8
	mov %esi, (%r8)
	mov %rdi, %rax
	add $8, %rsp
	.cfi_adjust_cfa_offset -8
	pop %r15
	.cfi_adjust_cfa_offset -8
	pop %r14
	.cfi_adjust_cfa_offset -8
	pop %r13
	.cfi_adjust_cfa_offset -8
	pop %r12
	.cfi_adjust_cfa_offset -8
	pop %rbx
	.cfi_adjust_cfa_offset -8
	pop %rbp
	.cfi_adjust_cfa_offset -8
	ret
	.cfi_endproc
	.size uarch_checked_call, .-uarch_checked_call

	.section .note.GNU-stack,"",@progbits
