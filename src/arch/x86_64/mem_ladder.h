// The size-class ladder of the x86-64 memmove/memcpy/memset variants,
// written once over an ISA's traits (after llvm-libc's inline_memcpy_x86).
// Include it after mem_blocks.h, i.e. after the file's target pragma: each
// variant instantiates it in its own translation unit, for its own ISA.
//
// Traits T give:
//   Small       block of the branchless class [Small::size, 4 * Small::size]
//               (copy_4x_clamped), the hot fall-through path
//   V           vector of the head/tail classes and the loops
//   masked_small  true: [0, 64) is one branchless masked class instead of
//               Small and the byte classes below it (T::copy_masked_64,
//               T::set_masked_64, whose fills take n == 64 as well), and
//               [64, 128] the first vector class
//   move_in_registers, set_in_registers  the largest n kept in registers:
//               the classes (b, 2b] from b = 4 * Small::size (64 when
//               masked) up to that bound, each head_tail<V, b / V::size>,
//               all loads before all stores (so memmove needs no direction
//               test there); a power-of-two multiple of that first b
//               (masked fills: set_nested, whose classes store as they go)
//   inline_loop  true: above the register classes, the V loop inline while
//               below every rep movsb/stosb and non-temporal window (no
//               call); false: always the noinline move_large / set_large
//               (masked fills: the loop inline, in set_nested)
// Above the register classes: move_large / set_large of mem_blocks.h
// (noinline), or the loop inline first where T::inline_loop says so.
// Sizes above the register classes leave right after the first class,
// without walking the compares of the classes between.
//
// Layout: every taken branch in the path of a call costs about as much
// as the moves of a small class, so which class falls through matters;
// and with branch targets 32-byte aligned (-falign-jumps=32, meson.build)
// a taken branch to a small class costs no more than falling into it
// (docs/measurements/policy-evidence.md#ladder-layout).
//
// vzeroupper is the compiler's: it clears the upper state on every path
// out of a function that wrote a ymm/zmm0-15 register (the avx512 variants
// use zmm16-31 only where the compiler can be told so, and need none: see
// src/arch/x86_64/meson.build). gcc does so only with
// -fexpensive-optimizations (-O2 and up): meson.build turns it on for
// every build of the library, so that an -O1 build (the sanitizer tree)
// is right too. (An explicit _mm256_zeroupper() here would be doubled by
// gcc at -O2; '#pragma GCC optimize' made gcc split the 256-bit moves.)
#pragma once

namespace uarch {
namespace {

// n > B and n <= T::move_in_registers: the classes (B, 2B], (2B, 4B], ...
template <class T, size_t B>
UARCH_INLINE void *move_classes(char *d, const char *s, size_t n)
{
	using V = typename T::V;
	if constexpr (2 * B < T::move_in_registers) {
		if (__builtin_expect(n <= 2 * B, 1)) {   // smaller sizes first, as callers see them
			copy_head_tail<V, int(B / V::size)>(d, s, n);
			return d;
		}
		return move_classes<T, 2 * B>(d, s, n);
	} else {
		copy_head_tail<V, int(B / V::size)>(d, s, n);   // the last: n <= 2B
		return d;
	}
}

// n > T::move_in_registers.
template <class T>
UARCH_INLINE void *move_beyond(char *d, const char *s, size_t n)
{
	const MemParams &p = mem_params;
	// Forward-safe (disjoint or d < s) and below every window: the loop
	// inline.
	if (T::inline_loop && uintptr_t(d) - uintptr_t(s) >= n && n < p.copy_loop_max) {
		copy_fwd_loop<typename T::V, false>(d, s, n);
		return d;
	}
	return move_large<typename T::V>(d, s, n, p);
}

// B < n: the class (B, 2B] (2B <= T::move_in_registers), then straight to
// move_beyond for the sizes above every class, then the classes between.
template <class T, size_t B>
UARCH_INLINE void *move_from_class(char *d, const char *s, size_t n)
{
	using V = typename T::V;
	if (__builtin_expect(n <= 2 * B, 1)) {
		copy_head_tail<V, int(B / V::size)>(d, s, n);
		return d;
	}
	if (n > T::move_in_registers)
		return move_beyond<T>(d, s, n);
	if constexpr (2 * B < T::move_in_registers)
		return move_classes<T, 2 * B>(d, s, n);
	return d;   // not reached: 2B == move_in_registers
}

template <class T>
UARCH_INLINE void *ladder_move(char *d, const char *s, size_t n)
{
	if constexpr (T::masked_small) {
		// Unlikely only for the layout: [64, 128] falls through, and the
		// masked class is reached by one taken branch (each path then
		// takes one; see the top of the file).
		if (__builtin_expect(n < 64, 0)) {
			T::copy_masked_64(d, s, n);   // branchless, n == 0 touches nothing
			return d;
		}
		// The first vector, which every class and the inline loop store,
		// loaded before the size compares (as glibc's avx512 memmove
		// does): the asm needs it in a register there, and the classes'
		// loads of s reuse it. Its load is then under way while a
		// mispredicted compare resolves
		// (docs/measurements/policy-evidence.md#ladder-first-vector).
		typename T::V::T first = T::V::load(s);
		__asm__("" : : "v"(first));
		return move_from_class<T, 64>(d, s, n);   // [64, 128] first: head_tail<V, 1> takes n == 64
	} else {
		using S = typename T::Small;
		if (__builtin_expect(n - S::size <= 3 * S::size, 1)) {
			copy_4x_clamped<S>(d, s, n);
			return d;
		}
		if (n < S::size) {
			copy_0_15(d, s, n);
			return d;
		}
		return move_from_class<T, 4 * S::size>(d, s, n);
	}
}

// The fills, in the same shape. v: the fill byte in every byte of V,
// splat once for all classes.
template <class T, size_t B>
UARCH_INLINE void *set_classes(char *d, typename T::V::T v, size_t n)
{
	using V = typename T::V;
	if constexpr (2 * B < T::set_in_registers) {
		if (__builtin_expect(n <= 2 * B, 1)) {
			set_head_tail<V, int(B / V::size)>(d, v, n);
			return d;
		}
		return set_classes<T, 2 * B>(d, v, n);
	} else {
		set_head_tail<V, int(B / V::size)>(d, v, n);
		return d;
	}
}

template <class T>
UARCH_INLINE void *set_beyond(char *d, typename T::V::T v, uint8_t c, size_t n)
{
	// Below the rep stosb window and the non-temporal threshold, as in
	// move_beyond.
	if (T::inline_loop && n < mem_params.set_loop_max) {
		set_fwd_loop<typename T::V>(d, v, n);
		return d;
	}
	return set_large<typename T::V>(d, c, n, mem_params);
}

template <class T, size_t B>
UARCH_INLINE void *set_from_class(char *d, typename T::V::T v, uint8_t c, size_t n)
{
	using V = typename T::V;
	if (__builtin_expect(n <= 2 * B, 1)) {
		set_head_tail<V, int(B / V::size)>(d, v, n);
		return d;
	}
	if (n > T::set_in_registers)
		return set_beyond<T>(d, v, c, n);
	if constexpr (2 * B < T::set_in_registers)
		return set_classes<T, 2 * B>(d, v, n);
	return d;   // not reached
}

// The masked variant's fills of n > V::size (64): each class stores its
// head vectors before it asks whether the size goes on, so a mispredicted
// compare discards no store the call needed, and the tail vectors once the
// class is known, in ascending order: the classes are (64, 128],
// (128, 256], (256, 512], then the 4-vector loop over the middle
// [4w, n - 4w) at w-aligned addresses, inline below the rep stosb and
// non-temporal windows, and the tail after it. It takes less time than
// the ladder's shape (all compares first, the loop behind a call) for
// random sizes, and no more for fixed ones
// (docs/measurements/policy-evidence.md#ladder-set-nested).
// Store order matters to a misaligned dst, whose every vector splits two
// lines: ascending, each store shares a line with the one before; head
// and tail stored in pairs (d, d+n-w, d+w, d+n-2w, ...) made fills to
// dst+1 slower (docs/measurements/policy-evidence.md#ladder-store-order).
// Keeps the compiler from ending the class it closes with a jump into
// another class's identical last store and return (gcc's cross-jumping
// made (2w, 4w] jump to (w, 2w]'s "store d + n - w; ret"): a taken branch
// more in the path (see Layout above).
UARCH_INLINE void tail_apart() { __asm__ __volatile__(""); }

template <class T>
UARCH_INLINE void *set_nested(char *d, typename T::V::T v, uint8_t c, size_t n)
{
	using V = typename T::V;
	constexpr size_t w = V::size;
	static_assert(T::set_in_registers == 8 * w, "the classes below end at 8 vectors");
	V::store(d, v);
	if (__builtin_expect(n <= 2 * w, 1)) {
		V::store(d + n - w, v);
		return d;
	}
	V::store(d + w, v);
	if (__builtin_expect(n <= 4 * w, 1)) {
		V::store(d + n - 2 * w, v);
		V::store(d + n - w, v);
		tail_apart();
		return d;
	}
	// n > 4w: a fill the loop does not take leaves before more stores are
	// in flight, which rep stosb would wait for (four head vectors first:
	// cold 4 KiB 0.68x glibc 2.36, two: 0.74x; none cost fills of <= 64 B
	// a cycle; Zen 5, docs/measurements/policy-evidence.md#rep-head).
	if (__builtin_expect(n >= mem_params.set_loop_max, 0))
		return set_large<V>(d, c, n, mem_params);
	V::store(d + 2 * w, v);
	V::store(d + 3 * w, v);
	if (__builtin_expect(n > 8 * w, 0))
		set_aligned_groups<V>(d + 4 * w, d + n - 4 * w, v);
	V::store(d + n - 4 * w, v);
	V::store(d + n - 3 * w, v);
	V::store(d + n - 2 * w, v);
	V::store(d + n - w, v);
	return d;
}

template <class T>
UARCH_INLINE void *ladder_set(char *d, int c, size_t n)
{
	if constexpr (T::masked_small) {
		// n == 64 in the masked class, unlike the copies': fills of up to
		// 64 bytes are most of the calls real programs make
		// (tests/data/profiles), and where their order is random this
		// compare mispredicts on its rarer side, less often with 64 B here
		// than with n < 64; the masked class is not the fall-through
		// (docs/measurements/policy-evidence.md#ladder-small-fills).
		if (__builtin_expect(n <= 64, 0)) {   // unlikely for the layout, as in ladder_move
			T::set_masked_64(d, uint8_t(c), n);
			return d;
		}
		return set_nested<T>(d, T::V::splat(splat8(c)), uint8_t(c), n);
	} else {
		using S = typename T::Small;
		if (__builtin_expect(n - S::size <= 3 * S::size, 1)) {
			set_4x_clamped<S>(d, S::splat(splat8(c)), n);
			return d;
		}
		if (n < S::size) {
			set_0_15(d, uint8_t(c), n);
			return d;
		}
		return set_from_class<T, 4 * S::size>(d, T::V::splat(splat8(c)), uint8_t(c), n);
	}
}

} // namespace
} // namespace uarch

// A ladder variant's entries, for policy T under the names of isa
// (mem.h): memmove, memcpy (the same code: the ladder tolerates overlap,
// so an alias, not a second copy) and memset. Used at file scope, after
// T's namespace is closed.
#define UARCH_X86_LADDER_ENTRIES(isa, T)                                                                      \
	UARCH_MEM_ENTRY void *uarch_x86_64_memmove_##isa(void *d, const void *s, size_t n)                      \
	{                                                                                                      \
		return uarch::ladder_move<uarch::T>(static_cast<char *>(d), static_cast<const char *>(s), n);   \
	}                                                                                                      \
	void *uarch_x86_64_memcpy_##isa(void *, const void *, size_t)                                          \
		__attribute__((alias("uarch_x86_64_memmove_" #isa)));                                           \
	UARCH_MEM_ENTRY void *uarch_x86_64_memset_##isa(void *d, int c, size_t n)                               \
	{                                                                                                      \
		return uarch::ladder_set<uarch::T>(static_cast<char *>(d), c, n);                               \
	}
