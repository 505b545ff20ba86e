// Checked calls (after dav1d's checkasm checked_call): every variant the
// tests call goes through uarch_checked_call, which plants sentinels in the
// callee-saved registers, calls, and reports what the callee broke:
//   x86-64  rbx rbp r12-r15, the direction flag, the stack pointer, and
//           upper YMM / ZMM0-15 state left dirty (XINUSE bits 2 and 6,
//           where XGETBV with ecx=1 exists; vzeroupper runs before the call)
//   arm64   x19-x28, x29, d8-d15, the stack pointer
// checked_call() adds a test failure naming the variant, op and size.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <string>
#include <type_traits>
#include <gtest/gtest.h>

extern "C" uintptr_t uarch_checked_call(const void *fn, uint32_t *clobbered, uintptr_t a0, uintptr_t a1,
					uintptr_t a2, uintptr_t a3);

namespace checked {

// Sets up the trampoline for this CPU (idempotent; checked_call calls it).
void init();
// What the trampoline can see on this CPU: "callee-saved, DF, SP, XINUSE".
std::string coverage();
// "rbx, upper YMM" for a mask from the trampoline.
std::string describe(uint32_t clobbered);
// Did the last init() find XGETBV1 (the upper-state check)?
bool checks_upper_state();

// One argument as the integer register that carries it: a reference by
// its address, as the ABI passes it.
template <class P, class A>
uintptr_t to_word(A &&a)
{
	if constexpr (std::is_reference_v<P>)
		return reinterpret_cast<uintptr_t>(&static_cast<P>(a));
	else if constexpr (std::is_pointer_v<P>)
		return reinterpret_cast<uintptr_t>(static_cast<P>(a));
	else
		return uintptr_t(static_cast<P>(a));
}

// Adds the failure for a clobber, once per test, variant, op and kind of
// clobber (a loop over a million sizes reports the first size only).
void report(const char *variant, const char *op, size_t size, uint32_t clobbered);

// fn(args...) through the trampoline. A clobber adds a failure
// "<variant> <op> n=<size>: clobbered <what>".
template <class R, class... P, class... A>
R checked_call(const char *variant, const char *op, size_t size, R (*fn)(P...), A... args)
{
	static_assert(sizeof...(P) <= 4 && sizeof...(A) == sizeof...(P), "up to 4 integer arguments");
	init();
	uintptr_t w[4] = {};
	size_t i = 0;
	((w[i++] = to_word<P>(args)), ...);
	uint32_t clobbered = 0;
	uintptr_t r = uarch_checked_call(reinterpret_cast<const void *>(fn), &clobbered, w[0], w[1], w[2], w[3]);
	if (clobbered)
		report(variant, op, size, clobbered);
	if constexpr (std::is_void_v<R>)
		return;
	else if constexpr (std::is_pointer_v<R>)
		return reinterpret_cast<R>(r);
	else
		return R(r);
}

} // namespace checked
