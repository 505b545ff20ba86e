// Composable building blocks for the x86-64 memcpy/memmove/memset variants.
//
// Include this AFTER the file's target pragma: every function here is then
// compiled for that file's ISA. Everything is in an anonymous namespace and
// always inlined, so two files that instantiate the same template for
// different targets never share (and never swap) a COMDAT copy.
//
// A block type B moves B::size bytes: load(p) -> B::T, store(p, v).
// Vector types add store_aligned, stream and splat (of the byte in the
// low 8 bits of a splat8() word). Names say the size
// precondition: copy_4x_clamped<B> needs B::size <= n <= 4 * B::size.
//
// Every copy block loads everything before it stores anything, so each is
// also a correct memmove for any overlap within its size range.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "arch/x86_64/mem.h"

#define UARCH_INLINE inline __attribute__((always_inline))

namespace uarch {
namespace {

typedef uint16_t u16u __attribute__((may_alias, aligned(1)));
typedef uint32_t u32u __attribute__((may_alias, aligned(1)));
typedef uint64_t u64u __attribute__((may_alias, aligned(1)));

struct B1 {
	using T = uint8_t;
	static constexpr size_t size = 1;
	static UARCH_INLINE T load(const char *p) { return *reinterpret_cast<const uint8_t *>(p); }
	static UARCH_INLINE void store(char *p, T v) { *reinterpret_cast<uint8_t *>(p) = v; }
	static UARCH_INLINE T splat(uint64_t c8) { return T(c8); }
};
struct B4 {
	using T = uint32_t;
	static constexpr size_t size = 4;
	static UARCH_INLINE T load(const char *p) { return *reinterpret_cast<const u32u *>(p); }
	static UARCH_INLINE void store(char *p, T v) { *reinterpret_cast<u32u *>(p) = v; }
	static UARCH_INLINE T splat(uint64_t c8) { return T(c8); }
};
struct B8 {
	using T = uint64_t;
	static constexpr size_t size = 8;
	static UARCH_INLINE T load(const char *p)
	{
		T v = *reinterpret_cast<const u64u *>(p);
#if defined(__clang__)
		// clang has no general-regs-only target on x86: pin the value to
		// a general register so its SLP vectorizer cannot merge the moves
		// of the gpr variant into SSE ones.
		__asm__("" : "+r"(v));
#endif
		return v;
	}
	static UARCH_INLINE void store(char *p, T v) { *reinterpret_cast<u64u *>(p) = v; }
	static UARCH_INLINE void store_aligned(char *p, T v) { *reinterpret_cast<uint64_t *>(p) = v; }
	// movnti: SSE2, every x86-64 CPU has it.
	static UARCH_INLINE void stream(char *p, T v)
	{
		__asm__("movnti %1, %0" : "=m"(*reinterpret_cast<uint64_t *>(p)) : "r"(v));
	}
	static UARCH_INLINE T splat(uint64_t c8) { return c8; }
};

// The fill byte in every byte of a 64-bit word.
UARCH_INLINE uint64_t splat8(int c) { return uint64_t(0x0101010101010101) * uint8_t(c); }

// ---- copies, n within a block's size range ---------------------------------

// 1 <= n <= 3: bytes at 0, n/2 and n-1 (the three coincide or overlap as
// n allows; together they cover [0, n)).
UARCH_INLINE void copy_1_3(char *d, const char *s, size_t n)
{
	uint8_t a = B1::load(s), b = B1::load(s + n / 2), c = B1::load(s + n - 1);
	B1::store(d, a);
	B1::store(d + n / 2, b);
	B1::store(d + n - 1, c);
}

// B::size <= n <= 4 * B::size, without a branch: four blocks at 0, b, c,
// n - size, where b = min(size, n - size) and c = n - size - b =
// max(0, n - 2 * size). [0, b + size) and [c, n) each cover at least
// min(n, 2 * size) bytes and c <= b + size, so together they cover [0, n);
// every block lies inside [0, n).
template <class B>
UARCH_INLINE void copy_4x_clamped(char *d, const char *s, size_t n)
{
	constexpr size_t w = B::size;
	size_t last = n - w;
	size_t b = last < w ? last : w;
	size_t c = last - b;
	typename B::T v0 = B::load(s), v1 = B::load(s + b), v2 = B::load(s + c), v3 = B::load(s + last);
	B::store(d, v0);
	B::store(d + b, v1);
	B::store(d + c, v2);
	B::store(d + last, v3);
}

// n < 16: [4, 15] in four 4-byte blocks, [1, 3] in bytes, 0 touches nothing.
UARCH_INLINE void copy_0_15(char *d, const char *s, size_t n)
{
	if (n >= 4)
		copy_4x_clamped<B4>(d, s, n);
	else if (n)
		copy_1_3(d, s, n);
}

// K * V::size <= n <= 2 * K * V::size: K blocks from the front and K from
// the back, all loaded before any is stored.
template <class V, int K>
UARCH_INLINE void copy_head_tail(char *d, const char *s, size_t n)
{
	constexpr size_t w = V::size;
	typename V::T h[K], t[K];
	// Unrolled, so h and t live in registers: gcc 12 left K = 8 (the
	// 16-zmm class) as loops over a stack array, which made avx512 copies
	// of 513-1024 bytes 2.4x slower than glibc's (Sapphire Rapids guest).
#pragma GCC unroll 16
	for (int i = 0; i < K; i++)
		h[i] = V::load(s + i * w);
#pragma GCC unroll 16
	for (int i = 0; i < K; i++)
		t[i] = V::load(s + n - (K - i) * w);
#pragma GCC unroll 16
	for (int i = 0; i < K; i++)
		V::store(d + i * w, h[i]);
#pragma GCC unroll 16
	for (int i = 0; i < K; i++)
		V::store(d + n - (K - i) * w, t[i]);
}

// ---- fills -------------------------------------------------------------------

UARCH_INLINE void set_1_3(char *d, uint8_t c, size_t n)
{
	B1::store(d, c);
	B1::store(d + n / 2, c);
	B1::store(d + n - 1, c);
}

// B::size <= n <= 4 * B::size: the same four positions as copy_4x_clamped.
template <class B>
UARCH_INLINE void set_4x_clamped(char *d, typename B::T v, size_t n)
{
	constexpr size_t w = B::size;
	size_t last = n - w;
	size_t b = last < w ? last : w;
	B::store(d, v);
	B::store(d + b, v);
	B::store(d + (last - b), v);
	B::store(d + last, v);
}

// n < 16, as copy_0_15.
UARCH_INLINE void set_0_15(char *d, uint8_t c, size_t n)
{
	if (n >= 4)
		set_4x_clamped<B4>(d, uint32_t(splat8(c)), n);
	else if (n)
		set_1_3(d, c, n);
}

// K * V::size <= n <= 2 * K * V::size.
template <class V, int K>
UARCH_INLINE void set_head_tail(char *d, typename V::T v, size_t n)
{
#pragma GCC unroll 16
	for (int i = 0; i < K; i++)
		V::store(d + i * V::size, v);
#pragma GCC unroll 16
	for (int i = 0; i < K; i++)
		V::store(d + n - (K - i) * V::size, v);
}

// ---- string instructions -----------------------------------------------------

UARCH_INLINE void rep_movsb(char *d, const char *s, size_t n)
{
	__asm__ __volatile__("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}

UARCH_INLINE void rep_stosb(char *d, uint8_t c, size_t n)
{
	__asm__ __volatile__("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
}

// rep movsb is slow when the buffers are close (Zen 3/4: dst-src within a
// few KiB, either direction; the CPU's 4 KiB and 4 GiB aliasing checks
// compare only low address bits). Judged on the distance mod 4 GiB, which
// also covers a small distance in the full address. And when dst lies just
// past src modulo 4 KiB, however far apart: on the Zen 4 guest (family
// 0x19 model 0x11) rep movsb of 4 KiB from an aligned src took 2986 TSC
// ticks at (dst - src) mod 4096 = 1, 2 or 8, 243 at 16, and 105-113 at 0,
// 32-4095 and just below (best of 50); glibc 2.36, which starts rep movsb
// at 2112 bytes there, copied 3000-8192 bytes to dst+1 22-30x slower than
// the vector loops when src and dst were 2 MiB-aligned buffers. The
// vector loops show nothing of the kind. Refused through 63: a cache
// line's margin past the slow distances measured.
UARCH_INLINE bool movsb_distance_ok(const char *d, const char *s)
{
	uint32_t ahead = uint32_t(uintptr_t(d) - uintptr_t(s));
	uint32_t behind = uint32_t(uintptr_t(s) - uintptr_t(d));
	uint32_t dist = ahead < behind ? ahead : behind;
	return dist >= 8192 && (ahead & 4095) - 1 >= 63;   // not in [1, 63] mod 4 KiB
}

// ---- loops -----------------------------------------------------------------

// Forward copy, n > 4 * V::size. Correct for disjoint buffers and for
// d < s with any overlap: the loop stores to dst below where it loads from
// src, so no source byte is overwritten before it was loaded.
//
// The head (the first two vectors; one for zmm) and the last four are
// loaded before the loop and stored after it. The loop stores aligned
// 4-vector groups from the first align-ed dst address above d (align =
// 2 * V::size, or 64 for zmm: whole cache lines per group when V::size >=
// 32). Invariant at the loop head: [d + skew, dl) is stored, [d, d +
// skew) (skew <= align) is in the head, and rem = d + n - dl bytes remain,
// the last 4 * size of which are in t0..t3 (d + skew <= d + align < d + n -
// 2 * size, so the saved head and tail cover what is left).
template <class V, bool NT>
UARCH_INLINE void copy_fwd_loop(char *d, const char *s, size_t n)
{
	constexpr size_t w = V::size;
	// zmm: one vector of head is enough to reach a 64-byte boundary, and
	// one store less made copies of 768-1024 bytes 3-9% faster (Sapphire
	// Rapids guest: 0.91-0.94x glibc -> 0.97-1.01x).
	constexpr size_t align = w >= 64 ? w : 2 * w;
	typename V::T h0 = V::load(s), h1 = align > w ? V::load(s + w) : h0;
	typename V::T t0 = V::load(s + n - 4 * w), t1 = V::load(s + n - 3 * w),
		      t2 = V::load(s + n - 2 * w), t3 = V::load(s + n - w);
	size_t skew = align - (uintptr_t(d) & (align - 1));   // 1..align
	char *dl = d + skew;
	const char *sl = s + skew;
	size_t rem = n - skew;
	while (rem > 4 * w) {
		if (NT)
			__builtin_prefetch(sl + 16 * w);
		typename V::T a = V::load(sl), b = V::load(sl + w), c = V::load(sl + 2 * w),
			      e = V::load(sl + 3 * w);
		if (NT) {
			V::stream(dl, a);
			V::stream(dl + w, b);
			V::stream(dl + 2 * w, c);
			V::stream(dl + 3 * w, e);
		} else {
			V::store_aligned(dl, a);
			V::store_aligned(dl + w, b);
			V::store_aligned(dl + 2 * w, c);
			V::store_aligned(dl + 3 * w, e);
		}
		dl += 4 * w;
		sl += 4 * w;
		rem -= 4 * w;
	}
	if (NT)
		__asm__ __volatile__("sfence" ::: "memory");   // NT stores are weakly ordered
	char *de = d + n;
	V::store(de - 4 * w, t0);
	V::store(de - 3 * w, t1);
	V::store(de - 2 * w, t2);
	V::store(de - w, t3);
	V::store(d, h0);
	if (align > w)
		V::store(d + w, h1);
}

// Backward copy, n > 4 * V::size, for d > s with overlap (the mirror image):
// the last vector and the first four are saved; the loop stores aligned
// 4-vector groups downward from the last V-aligned address at or below
// d + n. Invariant: [dh, d + n) is stored or covered by the saved tail, and
// rem = dh - d > 0 bytes remain, of which the saved head covers 4 * size.
template <class V>
UARCH_INLINE void copy_bwd_loop(char *d, const char *s, size_t n)
{
	constexpr size_t w = V::size;
	typename V::T tail = V::load(s + n - w);
	typename V::T h0 = V::load(s), h1 = V::load(s + w), h2 = V::load(s + 2 * w), h3 = V::load(s + 3 * w);
	size_t skew = uintptr_t(d + n) & (w - 1);   // 0..w-1
	char *dh = d + n - skew;
	const char *sh = s + n - skew;
	size_t rem = n - skew;
	while (rem > 4 * w) {
		dh -= 4 * w;
		sh -= 4 * w;
		rem -= 4 * w;
		typename V::T a = V::load(sh), b = V::load(sh + w), c = V::load(sh + 2 * w),
			      e = V::load(sh + 3 * w);
		V::store_aligned(dh + 3 * w, e);
		V::store_aligned(dh + 2 * w, c);
		V::store_aligned(dh + w, b);
		V::store_aligned(dh, a);
	}
	V::store(d, h0);
	V::store(d + w, h1);
	V::store(d + 2 * w, h2);
	V::store(d + 3 * w, h3);
	V::store(d + n - w, tail);
}

// memmove for n > 4 * V::size (the sizes the caller does not keep in
// registers): rep movsb inside its window when forward, far apart and
// allowed; non-temporal stores for big non-overlapping copies; otherwise
// the vector loops. Shared by memcpy (which tolerates overlap). Returns d,
// so that the entry reaches it by a tail jump with no frame of its own.
template <class V>
__attribute__((noinline)) void *move_large(char *d, const char *s, size_t n, const MemParams &p)
{
	uintptr_t ahead = uintptr_t(d) - uintptr_t(s);
	if (ahead < n) {                // d > s, overlapping: backward, never rep movsb
		if (ahead)
			copy_bwd_loop<V>(d, s, n);
		return d;
	}
	// Forward from here: disjoint, or d < s.
	// The windows' tests are 'unlikely' for the layout: the loop, which
	// the smaller (more frequent) sizes take, falls through.
	if (__builtin_expect(n >= p.movsb_min && n < p.movsb_max && n > 64 && movsb_distance_ok(d, s), 0)) {
		// Zen 3 runs rep movsb slowly to a misaligned dst: rep movsb from
		// the next 64-byte boundary, the first 64 bytes with vectors,
		// loaded first (d < s may overlap) and stored last: rep movsb waits
		// for a store still in flight (cold 4 KiB 0.81x glibc 2.36 stored
		// first, 1.00x last, Zen 5; policy-evidence.md#rep-head).
		constexpr size_t k = 64 / V::size;
		typename V::T head[k];
		for (size_t i = 0; i < k; i++)
			head[i] = V::load(s + i * V::size);
		size_t skew = (0 - uintptr_t(d)) & 63;
		rep_movsb(d + skew, s + skew, n - skew);
		for (size_t i = 0; i < k; i++)
			V::store(d + i * V::size, head[i]);
		return d;
	}
	// Past the non-temporal threshold, disjoint: streaming stores, decided
	// by size alone (no look at dst's pages: that would take a system call).
	if (__builtin_expect(n >= p.nt_min && uintptr_t(s) - uintptr_t(d) >= n, 0))
		copy_fwd_loop<V, true>(d, s, n);
	else
		copy_fwd_loop<V, false>(d, s, n);
	return d;
}

// Aligned 4-vector groups from the last aligned address at or below from,
// while a group starts below end: 2 * V::size-aligned for xmm and ymm (so
// each group covers whole cache lines when V::size >= 32), V::size-aligned
// for zmm (a line each already; aligning to 128 made fills of 768-2048
// bytes 4-14% slower, Sapphire Rapids guest). The caller has stored
// [from - V::size, from) and [end, end + 4 * V::size) itself: the first
// group may start below from, the last ends inside [end, end + 4 * size).
// NT: non-temporal stores (a fill larger than the cache share would evict
// everything else and pay a read for ownership per line); the caller
// fences.
template <class V, bool NT = false>
UARCH_INLINE void set_aligned_groups(char *from, char *end, typename V::T v)
{
	constexpr size_t w = V::size;
	constexpr size_t align = w >= 64 ? w : 2 * w;
	for (char *p = reinterpret_cast<char *>(uintptr_t(from) & ~uintptr_t(align - 1)); p < end; p += 4 * w) {
		for (size_t i = 0; i < 4 * w; i += w) {
			if (NT)
				V::stream(p + i, v);
			else
				V::store_aligned(p + i, v);
		}
	}
}

// Fill, n >= 4 * V::size: four vectors unaligned at each end, aligned
// groups between them.
template <class V, bool NT = false>
UARCH_INLINE void set_fwd_loop(char *d, typename V::T v, size_t n)
{
	constexpr size_t w = V::size;
	set_head_tail<V, 2>(d, v, 4 * w);
	char *end = d + n - 4 * w;
	set_aligned_groups<V, NT>(d + 4 * w, end, v);
	if (NT)
		__asm__ __volatile__("sfence" ::: "memory");   // NT stores are weakly ordered
	set_head_tail<V, 2>(end, v, 4 * w);
}

// memset for n > 4 * V::size. Takes the byte, not a vector: a noinline
// function that receives a ymm/zmm argument is compiled with neither the
// caller nor the callee owning the vzeroupper (gcc 12 emitted none, and
// memset returned with dirty upper state from there).
//
// Where a fill of byte c starts streaming: zeros and other bytes have their
// own thresholds (plan.h).
UARCH_INLINE uint64_t nt_fill_from(const MemParams &p, uint8_t c)
{
	return c ? p.nt_fill_min : p.nt_min;
}

template <class V>
__attribute__((noinline)) void *set_large(char *d, uint8_t c, size_t n, const MemParams &p)
{
	constexpr size_t w = V::size;
	typename V::T v = V::splat(splat8(c));
	if (__builtin_expect(n >= p.stosb_min && n < p.stosb_max && n > 64, 0)) {   // as in move_large
		// The head after rep stosb, which waits for stores in flight.
		size_t skew = (0 - uintptr_t(d)) & 63;
		rep_stosb(d + skew, c, n - skew);
		for (size_t i = 0; i < 64; i += w)
			V::store(d + i, v);
		return d;
	}
	// Past the byte's non-temporal threshold and outside the rep stosb
	// window (which the policy ends there where streaming fills win):
	// decided by size alone.
	if (__builtin_expect(n >= nt_fill_from(p, c), 0))
		set_fwd_loop<V, true>(d, v, n);
	else
		set_fwd_loop<V>(d, v, n);
	return d;
}

} // namespace
} // namespace uarch
