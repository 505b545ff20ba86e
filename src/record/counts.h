// The recorder's counts (libuarch_record.so, for uarch-prof): per thread,
// no locks. The hot path is one initial-exec TLS load of the thread's
// block, one test, and plain increments in it; no atomics, no stack
// frame. A thread's first call claims a block from a fixed static pool
// with one atomic add; threads beyond the pool keep a null block and count
// into a shared overflow block with atomic adds. In trace mode the fast
// path stays unset (tls_block null), so every call takes note_slow, which
// also records it (trace.h).
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "preload/entry.h"
#include "record/format.h"

#pragma GCC visibility push(hidden)
namespace uarch::record {

using namespace uarch::prof;

struct Block {
	Counts c;
};

// 128 blocks of ~100 KiB: 13 MiB of zero pages reserved, touched only as
// threads count into them.
constexpr uint32_t pool_blocks = 128;
extern Block pool[pool_blocks + 1];     // the last one is the overflow block
extern uint32_t pool_used;              // blocks handed out (may exceed pool_blocks)
extern uint32_t overflow_threads;       // this process's threads counting into the last block
// Null until the thread's first call, and for good in a thread beyond the
// pool (overflow set): the hot path's one test sends both to note_slow.
extern __thread Block *tls_block __attribute__((tls_model("initial-exec")));
extern __thread bool tls_overflow __attribute__((tls_model("initial-exec")));
// The thread's block, also in trace mode (where tls_block stays null).
extern __thread Block *tls_own __attribute__((tls_model("initial-exec")));
// The thread's number in this process, in the order of first calls.
extern __thread uint32_t tls_tid __attribute__((tls_model("initial-exec")));

template <bool Shared>
inline void add(uint64_t *p, uint64_t v = 1)
{
	if (Shared)
		__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
	else
		*p += v;
}

// Shared: the overflow block, whose every add is atomic.
template <bool Shared>
inline void note_into(Block *b, Entry e, OpIndex op, const void *d, const void *s, size_t n)
{
	OpCounts &o = b->c.op[op];
	// memcpy, memmove and memset are counted by their sizes alone (the
	// writer derives their entries): one store fewer on the most frequent
	// calls.
	if (e != e_memcpy && e != e_memmove && e != e_memset)
		add<Shared>(&b->c.entry[e]);
	if (__builtin_expect(n <= exact_max, 1)) {
		add<Shared>(&o.size[n]);
	} else {
		add<Shared>(&o.size[size_slot(n)]);
		add<Shared>(&o.big_bytes, n);
	}
	uintptr_t di = uintptr_t(d), si = uintptr_t(s);
	add<Shared>(&o.dst_align[di & 63]);
	if (op == p_memset)
		return;
	add<Shared>(&o.src_align[si & 63]);
	if (op == p_memmove) {
		Overlap ov = di == si ? ov_same
			: di < si ? (di + n > si ? ov_forward : ov_disjoint)
				  : (si + n > di ? ov_backward : ov_disjoint);
		add<Shared>(&o.overlap[ov]);
	}
}

// A thread's first call (claims a block), every call of a thread beyond
// the pool (atomic adds into the overflow block), and every call in trace
// mode.
__attribute__((noinline)) void note_slow(Entry e, OpIndex op, const void *d, const void *s, size_t n);
__attribute__((noinline)) void note_cmp_slow(CmpIndex c, size_t n);

template <bool Shared>
inline void note_cmp_into(Block *b, CmpIndex c, size_t n)
{
	add<Shared>(&b->c.cmp.calls[c]);
	add<Shared>(&b->c.cmp.bytes[c], n);
}

inline void note_cmp(CmpIndex c, size_t n)
{
	if (__builtin_expect(!uarch::relocated(), 0))
		return;   // before ld.so relocated this library: no TLS offsets yet
	if (Block *b = tls_block)
		note_cmp_into<false>(b, c, n);
	else
		note_cmp_slow(c, n);
}

inline void note(Entry e, OpIndex op, const void *d, const void *s, size_t n)
{
	if (__builtin_expect(!uarch::relocated(), 0))
		return;   // as note_cmp
	if (Block *b = tls_block)
		note_into<false>(b, e, op, d, s, n);
	else
		note_slow(e, op, d, s, n);
}

// In a fork child: the counts so far are the parent's. Zeroes them all;
// the forking thread keeps its block, the others' stay empty.
void reset_counts_in_child();

// Stores, not a loop the compiler could turn into a call to memset (this
// library's own, which would count it).
void zero_words(void *p, size_t bytes);

} // namespace uarch::record
#pragma GCC visibility pop
