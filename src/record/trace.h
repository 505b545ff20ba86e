// The recorder's trace (uarch-prof --trace: UARCH_PROF_TRACE=N,
// UARCH_PROF_TRACE_KEEP=first|last): every call of the memcpy family
// takes an index from a process-wide counter (one atomic add) and, within
// the budget of N (the first N, or the last N in a ring), fills a record
// in a region mapped at load: entry, dst, src, size, thread and the ticks
// since the thread's previous call (arch/clock.h: no system call). The
// file (record/format.h) goes beside the profile, with the tick rate, the
// process's CPU time and the cost recording adds to a call, timed then on
// a scratch record.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "arch/primitives.h"
#include "record/counts.h"

#pragma GCC visibility push(hidden)
namespace uarch::record {

// The trace's records; budget 0: not tracing.
struct Trace {
	TraceRecord *rec;
	uint64_t budget;
	uint64_t next;       // calls so far: the next call's index
	bool ring;           // keep the last `budget` (else the first)
};
extern Trace trace;
// The tick of the thread's previous call.
extern __thread uint64_t tls_last_tick __attribute__((tls_model("initial-exec")));

// One call into t: its index, then (within the budget) its record, seq
// stored last so that a reader can tell a complete record.
inline void trace_into(Trace &t, Entry e, const void *d, const void *s, size_t n)
{
	uint64_t now = arch::ticks(), last = tls_last_tick;
	tls_last_tick = now;
	uint64_t i = __atomic_fetch_add(&t.next, 1, __ATOMIC_RELAXED), slot = i;
	if (i >= t.budget) {
		if (!t.ring)
			return;
		slot = i % t.budget;
	}
	TraceRecord *r = &t.rec[slot];
	__atomic_store_n(&r->seq, 0, __ATOMIC_RELAXED);
	r->dst = uint64_t(uintptr_t(d));
	r->src = uint64_t(uintptr_t(s));
	r->size = n;
	r->gap = last ? now - last : 0;
	r->tid = tls_tid;
	r->entry = e;
	__atomic_store_n(&r->seq, i + 1, __ATOMIC_RELEASE);
}

// At load: maps the region when budget (N) is 1 to 2^32 (else, or where
// mmap fails: no trace); ring: keep the last N.
void trace_start(uint64_t budget, bool ring);
// Writes the trace to path (created, or reopened where this image wrote
// it before: an exec that failed, then exit).
void write_trace(const char *path, long pid);

} // namespace uarch::record
#pragma GCC visibility pop
