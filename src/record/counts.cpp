// The recorder's blocks and the slow paths of counting (counts.h).
#include "record/counts.h"
#include "record/trace.h"
#include "sys/sys.h"

namespace uarch::record {

Block pool[pool_blocks + 1];
uint32_t pool_used;
uint32_t overflow_threads;
__thread Block *tls_block __attribute__((tls_model("initial-exec")));
__thread bool tls_overflow __attribute__((tls_model("initial-exec")));
__thread Block *tls_own __attribute__((tls_model("initial-exec")));
__thread uint32_t tls_tid __attribute__((tls_model("initial-exec")));

namespace {

// The thread's block, claimed at its first call; *shared: the overflow
// block (a thread beyond the pool), whose adds must be atomic.
inline Block *own_block(bool *shared)
{
	if (Block *b = tls_own)
		return b;
	if (!tls_overflow) {
		// The thread's number in this process, in the order of first
		// calls: no system call inside memcpy (gettid would be one).
		uint32_t i = __atomic_fetch_add(&pool_used, 1, __ATOMIC_RELAXED);
		tls_tid = i + 1;
		if (i < pool_blocks) {
			tls_own = &pool[i];
			if (!trace.budget)
				tls_block = tls_own;
			return tls_own;
		}
		tls_overflow = true;
		__atomic_fetch_add(&overflow_threads, 1, __ATOMIC_RELAXED);
	}
	*shared = true;
	return &pool[pool_blocks];
}

} // namespace

void note_slow(Entry e, OpIndex op, const void *d, const void *s, size_t n)
{
	bool shared = false;
	Block *b = own_block(&shared);
	if (shared)
		note_into<true>(b, e, op, d, s, n);
	else
		note_into<false>(b, e, op, d, s, n);
	if (trace.budget)
		trace_into(trace, e, d, s, n);
}

void note_cmp_slow(CmpIndex c, size_t n)
{
	bool shared = false;
	Block *b = own_block(&shared);
	if (shared)
		note_cmp_into<true>(b, c, n);
	else
		note_cmp_into<false>(b, c, n);
}

void zero_words(void *p, size_t bytes)
{
	uint64_t *w = static_cast<uint64_t *>(p);
	for (size_t i = 0; i < bytes / 8; i++)
		__atomic_store_n(&w[i], 0, __ATOMIC_RELAXED);
}

void reset_counts_in_child()
{
	uint32_t used = pool_used < pool_blocks ? pool_used : pool_blocks + 1;
	for (uint32_t i = 0; i < used; i++)
		zero_words(&pool[i].c, sizeof pool[i].c);
	overflow_threads = tls_overflow ? 1 : 0;
	tls_tid = uint32_t(sys::call6(sys::nr_gettid));
}

} // namespace uarch::record
