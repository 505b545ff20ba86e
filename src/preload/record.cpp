// libuarch_record.so: the C library's names, as in libuarch_preload.so, but
// each call is counted (op, size, alignments, memmove overlap) before it
// goes to the bound variant. uarch-prof preloads it and reads the files it
// leaves: one per process image, written at exit and before each exec to
// $UARCH_PROF_OUT<pid>.uprof, or <pid>-<k>.uprof where that name is taken
// (the image an exec replaced, a pid reused in a long run or in another
// pid namespace), and by _exit and _Exit too. A process killed by a
// signal, or ending by a raw exit system call, writes nothing.
//
// Hot path: one initial-exec TLS load of the thread's block, one test, and
// plain increments in it; no locks, no atomics, no stack frame, then one
// jump to the bound variant. A thread's first call claims a block from a
// fixed static pool with one atomic add; threads beyond the pool keep a
// null block and count into a shared overflow block with atomic adds.
// No heap, no stdio: the file is written with raw system calls.
//
// memcmp, bcmp, strlen and strcmp are counted too (calls, bytes) and passed
// on to the C library's, found at load.
//
// Trace mode (UARCH_PROF_TRACE=N, UARCH_PROF_TRACE_KEEP=first|last, set by
// uarch-prof --trace): every call of the memcpy family also takes an index
// from a process-wide counter (one atomic add) and, within the budget of N
// (the first N, or the last N in a ring), fills a record in a region mapped
// at load: entry, dst, src, size, thread id and the ticks since the thread's
// previous call (rdtsc on x86-64, cntvct_el0 on arm64: no system call). The
// fast path above is then left unset (tls_block stays null), so every call
// takes the slow path and counting-only mode pays nothing for the trace.
// The file (record_format.h) is written beside the profile, with the tick
// frequency, the process's CPU time and the cost recording adds to a call,
// timed then on a scratch record.
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <sys/auxv.h>
#include "dispatch/bind.h"
#include "dispatch/libc_names.h"
#include "sys/sys.h"
#include "preload/entry.h"
#include "preload/record_format.h"

extern "C" int __register_atfork(void (*prepare)(), void (*parent)(), void (*child)(), void *dso_handle);
extern "C" void __cxa_finalize(void *dso_handle);

namespace {

// This library's handle for the C library's per-library registrations
// (the start files' __dso_handle, which -nostartfiles leaves out).
char dso_handle;

using namespace uarch::prof;

struct Block {
	Counts c;
};

// 128 blocks of ~100 KiB: 13 MiB of zero pages reserved, touched only as
// threads count into them.
constexpr uint32_t pool_blocks = 128;
Block pool[pool_blocks + 1];     // the last one is the overflow block
uint32_t pool_used;              // blocks handed out (may exceed pool_blocks)
uint32_t overflow_threads;       // this process's threads counting into the last block
// Null until the thread's first call, and for good in a thread beyond the
// pool (overflow set): the hot path's one test sends both to note_slow.
__thread Block *tls_block __attribute__((tls_model("initial-exec")));
__thread bool tls_overflow __attribute__((tls_model("initial-exec")));
// The thread's block, also in trace mode (where tls_block stays null).
__thread Block *tls_own __attribute__((tls_model("initial-exec")));
// Trace mode: the tick of the thread's previous call, and its kernel id.
__thread uint64_t tls_last_tick __attribute__((tls_model("initial-exec")));
__thread uint32_t tls_tid __attribute__((tls_model("initial-exec")));

char out_prefix[4096];           // from UARCH_PROF_OUT at load; empty: write nothing
char own_path[sizeof out_prefix + 32];   // the file this image wrote; empty: none yet
long owner_pid;                  // whose counts the blocks hold: set at load and in a fork child
long writer_tid;                 // the thread in write_profile (merged is shared); 0: none

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
	// memcpy, memmove and memset are counted by their sizes alone (see
	// write_profile): one store fewer on the most frequent calls.
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

#if defined(__x86_64__)
enum : long { nr_write = 1, nr_mmap = 9, nr_getpid = 39, nr_getrusage = 98, nr_gettid = 186, nr_exit_group = 231 };
#elif defined(__aarch64__)
enum : long { nr_write = 64, nr_mmap = 222, nr_getpid = 172, nr_getrusage = 165, nr_gettid = 178, nr_exit_group = 94 };
#endif

inline uint64_t ticks()
{
#if defined(__x86_64__)
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return lo | uint64_t(hi) << 32;
#else
	uint64_t v;
	__asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
	return v;
#endif
}

// The trace's records; budget 0: not tracing.
struct Trace {
	TraceRecord *rec;
	uint64_t budget;
	uint64_t next;       // calls so far: the next call's index
	bool ring;           // keep the last `budget` (else the first)
};
Trace trace;

// One call into t: its index, then (within the budget) its record, seq
// stored last so that a reader can tell a complete record.
inline void trace_into(Trace &t, Entry e, const void *d, const void *s, size_t n)
{
	uint64_t now = ticks(), last = tls_last_tick;
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

// A thread's first call (claims a block), every call of a thread beyond
// the pool (atomic adds into the overflow block), and every call in trace
// mode.
__attribute__((noinline)) void note_slow(Entry e, OpIndex op, const void *d, const void *s, size_t n)
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

template <bool Shared>
inline void note_cmp_into(Block *b, CmpIndex c, size_t n)
{
	add<Shared>(&b->c.cmp.calls[c]);
	add<Shared>(&b->c.cmp.bytes[c], n);
}

__attribute__((noinline)) void note_cmp_slow(CmpIndex c, size_t n)
{
	bool shared = false;
	Block *b = own_block(&shared);
	if (shared)
		note_cmp_into<true>(b, c, n);
	else
		note_cmp_into<false>(b, c, n);
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

bool write_all(long fd, const void *p, uint64_t n)
{
	const char *c = static_cast<const char *>(p);
	while (n) {
		long w = uarch::sys::call6(nr_write, fd, long(c), long(n));
		if (w == -4)   // EINTR
			continue;
		if (w <= 0)
			return false;
		c += w;
		n -= uint64_t(w);
	}
	return true;
}

Counts merged;   // static: no heap, and too big for a thread's stack

// Stores, not a loop the compiler could turn into a call to memset (this
// library's own, which would count it).
void zero_words(void *p, size_t bytes)
{
	uint64_t *w = static_cast<uint64_t *>(p);
	for (size_t k = 0; k < bytes / sizeof(uint64_t); k++)
		__atomic_store_n(&w[k], 0, __ATOMIC_RELAXED);
}

// Appends the decimal digits of v at path[l]; returns the new length.
size_t put_decimal(char *path, size_t l, uint64_t v)
{
	char digits[24];
	int nd = 0;
	for (; v || !nd; v /= 10)
		digits[nd++] = char('0' + v % 10);
	while (nd)
		path[l++] = digits[--nd];
	return l;
}

// The recorder's files: created new (never an existing name, never
// through a symbolic link: a planted link would have its target
// overwritten), readable by their owner only (a trace holds addresses),
// and reopened by this image without following a link.
constexpr long out_create = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
constexpr long out_reopen = O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC;
constexpr long out_mode = 0600;

// Opens this image's file: the one it wrote before (an exec that failed,
// then exit), else a new one, <prefix><pid>.uprof or the first free
// <prefix><pid>-<k>.uprof: never another image's.
long open_own_file(long pid)
{
	if (own_path[0])   // created by this image: reopened, never through a link
		return uarch::sys::call6(uarch::sys::nr_openat, uarch::sys::at_fdcwd, long(own_path),
					 out_reopen, 0);
	char path[sizeof own_path];
	size_t base = 0;
	while (out_prefix[base] && base < sizeof out_prefix - 1) {
		path[base] = out_prefix[base];
		base++;
	}
	base = put_decimal(path, base, uint64_t(pid));
	for (uint64_t k = 0; k < 1000; k++) {
		size_t l = base;
		if (k) {
			path[l++] = '-';
			l = put_decimal(path, l, k);
		}
		for (const char *x = ".uprof"; *x; x++)
			path[l++] = *x;
		path[l] = 0;
		long fd = uarch::sys::call6(uarch::sys::nr_openat, uarch::sys::at_fdcwd, long(path),
					    out_create, out_mode);
		if (fd == -EEXIST)
			continue;
		if (fd >= 0)
			for (size_t i = 0; i <= l; i++)
				own_path[i] = path[i];
		return fd;
	}
	return -EEXIST;
}

// The merge and the write, for write_profile.
void write_merged(long pid)
{
	uint32_t used = __atomic_load_n(&pool_used, __ATOMIC_ACQUIRE);
	uint32_t blocks = used < pool_blocks ? used : pool_blocks + 1;
	zero_words(&merged, sizeof merged);
	uint64_t *m = reinterpret_cast<uint64_t *>(&merged);
	constexpr size_t words = sizeof(Counts) / sizeof(uint64_t);
	uint64_t threads = 0;
	for (uint32_t i = 0; i < blocks; i++) {
		const uint64_t *w = reinterpret_cast<const uint64_t *>(&pool[i].c);
		uint64_t calls = 0;   // every name's calls are in its op's sizes
		for (uint32_t op = 0; op < p_op_count; op++)
			for (uint32_t k = 0; k < size_slots; k++)
				calls += __atomic_load_n(&pool[i].c.op[op].size[k], __ATOMIC_RELAXED);
		uint64_t compared = 0;
		for (uint32_t k = 0; k < cmp_count; k++)
			compared += __atomic_load_n(&pool[i].c.cmp.calls[k], __ATOMIC_RELAXED);
		if (!calls && !compared)
			continue;   // a thread that forked away, or reset in a child
		// threads: those that called the memcpy family (a thread that only
		// compared adds its counts, not itself).
		if (calls)
			threads += i == pool_blocks ? __atomic_load_n(&overflow_threads, __ATOMIC_RELAXED) : 1;
		for (size_t k = 0; k < words; k++)
			m[k] += __atomic_load_n(&w[k], __ATOMIC_RELAXED);
	}
	// The first name of each op: its op's calls less the other names'.
	constexpr Entry first[p_op_count] = {e_memcpy, e_memmove, e_memset};
	constexpr Entry end[p_op_count] = {e_memmove, e_memset, entry_count};
	for (uint32_t op = 0; op < p_op_count; op++) {
		uint64_t calls = 0;
		for (uint32_t k = 0; k < size_slots; k++)
			calls += merged.op[op].size[k];
		for (uint32_t e = first[op] + 1; e < end[op]; e++)
			calls -= merged.entry[e];
		merged.entry[first[op]] = calls;
	}
	Header h = {{'U', 'A', 'R', 'C', 'H', 'P', 'R', 'F'}, version, sizeof(Header), sizeof(Counts),
		    fnv1a(&merged, sizeof(Counts)), 1, threads};

	long fd = open_own_file(pid);
	if (fd < 0)
		return;
	if (write_all(fd, &h, sizeof h))
		write_all(fd, &merged, sizeof merged);
	uarch::sys::close(fd);
}

struct Timespec {
	long sec, nsec;
};

uint64_t monotonic_ns()
{
	Timespec t = {0, 0};
	uarch::sys::call6(uarch::sys::nr_clock_gettime, 1 /* CLOCK_MONOTONIC */, long(&t));
	return uint64_t(t.sec) * 1000000000u + uint64_t(t.nsec);
}

uint64_t load_ticks, load_ns;   // at load (and where a fork child starts: the same clocks)

// Ticks per second: arm64 says so (cntfrq_el0); on x86-64 the TSC is timed
// against CLOCK_MONOTONIC from load to now, over 2 ms at least.
uint64_t tick_hz()
{
#if defined(__aarch64__)
	uint64_t f;
	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(f));
	return f;
#else
	uint64_t ns, t;
	do {
		t = ticks();
		ns = monotonic_ns();
	} while (ns - load_ns < 2000000);
	return uint64_t(double(t - load_ticks) * 1e9 / double(ns - load_ns));
#endif
}

uint64_t cpu_time_ns()
{
	struct Timeval {
		long sec, usec;
	};
	struct {
		Timeval utime, stime;
		long rest[14];
	} ru;   // struct rusage
	zero_words(&ru, sizeof ru);
	if (uarch::sys::call6(nr_getrusage, 0 /* RUSAGE_SELF */, long(&ru)) != 0)
		return 0;
	return uint64_t(ru.utime.sec + ru.stime.sec) * 1000000000u + uint64_t(ru.utime.usec + ru.stime.usec) * 1000u;
}

// The ticks recording adds to one call, 16 times over: small copies
// through the trace path (counted into a scratch block, recorded into a
// scratch ring) against the same copies alone; the faster of 5 runs each.
Block scratch_block;
TraceRecord scratch_rec[64];
alignas(64) char cal_dst[128], cal_src[128];

__attribute__((noinline)) void cal_traced(Trace &t, uint32_t k)
{
	note_into<false>(&scratch_block, e_memcpy, p_memcpy, cal_dst, cal_src, k & 63);
	trace_into(t, e_memcpy, cal_dst, cal_src, k & 63);
	uarch::bound_memcpy(cal_dst, cal_src, k & 63);
}

__attribute__((noinline)) void cal_plain(Trace &, uint32_t k) { uarch::bound_memcpy(cal_dst, cal_src, k & 63); }

uint64_t overhead_ticks_x16()
{
	Trace t = {scratch_rec, 64, 0, true};
	uint64_t keep_tick = tls_last_tick;
	constexpr uint32_t calls = 4096;
	uint64_t best[2] = {~uint64_t(0), ~uint64_t(0)};
	for (int run = 0; run < 6; run++)   // the first run warms up
		for (int side = 0; side < 2; side++) {
			void (*volatile fn)(Trace &, uint32_t) = side ? cal_traced : cal_plain;
			void (*f)(Trace &, uint32_t) = fn;
			uint64_t t0 = ticks();
			for (uint32_t k = 0; k < calls; k++)
				f(t, k);
			uint64_t dt = ticks() - t0;
			if (run && dt < best[side])
				best[side] = dt;
		}
	tls_last_tick = keep_tick;
	return best[1] > best[0] ? (best[1] - best[0]) * 16 / calls : 0;
}

// The trace beside the profile: own_path with .utrace for .uprof (the
// profile's O_EXCL create made the name this image's).
void write_trace(long pid)
{
	if (!trace.budget || !own_path[0])
		return;
	char path[sizeof own_path];
	size_t l = 0;
	for (; own_path[l]; l++)
		path[l] = own_path[l];
	if (l < 6)
		return;
	l -= 6;   // ".uprof"
	for (const char *x = ".utrace"; *x; x++)
		path[l++] = *x;
	path[l] = 0;
	// Created by this image's first write; an exec that failed, then exit,
	// writes it again.
	static bool written;
	long fd = uarch::sys::call6(uarch::sys::nr_openat, uarch::sys::at_fdcwd, long(path),
				    written ? out_reopen : out_create, out_mode);
	if (fd < 0)
		return;
	written = true;
	uint64_t calls = __atomic_load_n(&trace.next, __ATOMIC_ACQUIRE);
	uint64_t n = calls < trace.budget ? calls : trace.budget;
	uint64_t first = calls - n;   // the index of the oldest call kept
	if (!trace.ring)
		first = 0;
	uint64_t complete = 0;
	for (uint64_t k = 0; k < n; k++)
		complete += __atomic_load_n(&trace.rec[(first + k) % trace.budget].seq, __ATOMIC_ACQUIRE) == first + k + 1;
	TraceHeader h = {{'U', 'A', 'R', 'C', 'H', 'T', 'R', 'C'}, trace_version, sizeof(TraceHeader),
			 sizeof(TraceRecord), trace.ring ? keep_last : keep_first, trace.budget, tick_hz(),
			 cpu_time_ns(), calls, n, calls - complete, uint64_t(pid), load_ns, overhead_ticks_x16()};
	uint64_t at = first % trace.budget;   // ring: the oldest, then around
	uint64_t tail = n < trace.budget - at ? n : trace.budget - at;
	if (write_all(fd, &h, sizeof h) && write_all(fd, &trace.rec[at], tail * sizeof(TraceRecord)))
		write_all(fd, &trace.rec[0], (n - tail) * sizeof(TraceRecord));
	uarch::sys::close(fd);
}

// Merges every block and writes this image's file: at exit, and before an
// exec (again at exit where the exec failed: the same file, the counts
// since added). Threads still running may race with the reads, and such a
// count is off by their last few calls at most. Not in a vfork child: it
// shares the parent's blocks, which the parent writes. One thread at a
// time (merged is shared): another waits (an exec racing exit must not
// end the process in the middle of the write); the same thread again (a
// signal handler that calls _exit) leaves the file to the write it
// interrupted.
void write_profile()
{
	if (!out_prefix[0])
		return;
	long pid = uarch::sys::call6(nr_getpid);
	if (pid != owner_pid)
		return;
	long tid = uarch::sys::call6(nr_gettid), none = 0;
	while (!__atomic_compare_exchange_n(&writer_tid, &none, tid, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		if (none == tid)
			return;
		none = 0;
		uarch::sys::call6(uarch::sys::nr_sched_yield);
	}
	write_merged(pid);
	write_trace(pid);
	__atomic_store_n(&writer_tid, 0, __ATOMIC_RELEASE);
}

// In a fork child: the counts so far are the parent's. Zero them all; the
// forking thread keeps its block, the others' stay empty. The child is
// its own process: its own file, and its own count of overflow threads.
void reset_in_child()
{
	uint32_t used = pool_used < pool_blocks ? pool_used : pool_blocks + 1;
	for (uint32_t i = 0; i < used; i++)
		zero_words(&pool[i].c, sizeof pool[i].c);
	overflow_threads = tls_overflow ? 1 : 0;
	trace.next = 0;   // the child's calls from index 0; the parent's records stay unread
	tls_tid = uint32_t(uarch::sys::call6(nr_gettid));
	own_path[0] = 0;
	writer_tid = 0;   // another thread of the parent's may have been writing
	owner_pid = uarch::sys::call6(nr_getpid);
}

// The C library's exec functions, found at load (dlsym may take locks and
// allocate: not in a vfork child, where Python's subprocess and others
// call exec).
using ExecveFn = int (*)(const char *, char *const[], char *const[]);
using ExecvFn = int (*)(const char *, char *const[]);
using FexecveFn = int (*)(int, char *const[], char *const[]);
using ExitFn = void (*)(int);
ExecveFn next_execve, next_execvpe;
ExecvFn next_execv, next_execvp;
FexecveFn next_fexecve;
ExitFn next_exit;
// The C library's comparisons, which the recorder's names pass on to.
using MemcmpFn = int (*)(const void *, const void *, size_t);
using StrlenFn = size_t (*)(const char *);
using StrcmpFn = int (*)(const char *, const char *);
MemcmpFn next_memcmp, next_bcmp;
StrlenFn next_strlen;
StrcmpFn next_strcmp;

template <class Fn>
void find_next(Fn *fn, const char *name)
{
	*fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

extern "C" char **environ;

// UARCH_PROF_OUT names where files are created: ignored in a set-id or
// file-capability program (AT_SECURE), as the tunables are, where the
// library came in through /etc/ld.so.preload.
// The value of the environment variable key ("NAME="), or null.
const char *env_value(const char *key)
{
	for (char **e = getauxval(AT_SECURE) ? nullptr : environ; e && *e; e++) {
		const char *v = *e, *k = key;
		while (*k && *v == *k)
			v++, k++;
		if (!*k)
			return v;
	}
	return nullptr;
}

bool same_text(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

// UARCH_PROF_TRACE=N (1 to 2^32 records) maps the trace's region, N
// records, touched only as calls fill it; no region (a bad N, or mmap
// failed): no trace.
void trace_init()
{
	const char *v = env_value("UARCH_PROF_TRACE="), *keep = env_value("UARCH_PROF_TRACE_KEEP=");
	if (!v || !*v)
		return;
	uint64_t n = 0;
	for (; *v >= '0' && *v <= '9' && n <= (uint64_t(1) << 32); v++)
		n = n * 10 + uint64_t(*v - '0');
	if (*v || !n || n > (uint64_t(1) << 32))
		return;
	enum : long { map_private = 0x02, map_anonymous = 0x20, map_noreserve = 0x4000 };
	long m = uarch::sys::call6(nr_mmap, 0, long(n * sizeof(TraceRecord)), uarch::sys::prot_read | uarch::sys::prot_write,
				   map_private | map_anonymous | map_noreserve, -1, 0);
	if (uarch::sys::failed(m))
		return;
	trace.rec = reinterpret_cast<TraceRecord *>(m);
	trace.ring = keep && same_text(keep, "last");
	load_ticks = ticks();
	load_ns = monotonic_ns();
	__atomic_store_n(&trace.budget, n, __ATOMIC_RELEASE);
	// Another library's constructor, run before this one, may have copied
	// already and so given this thread the counting-only fast path: back
	// to the path that records.
	tls_block = nullptr;
}

__attribute__((constructor(102))) void record_init()
{
	if (const char *v = env_value("UARCH_PROF_OUT=")) {
		size_t l = 0;
		while (v[l] && l < sizeof out_prefix - 1) {
			out_prefix[l] = v[l];
			l++;
		}
		out_prefix[l] = 0;
	}
	owner_pid = uarch::sys::call6(nr_getpid);
	if (out_prefix[0])
		trace_init();
	// glibc's own registration: pthread_atfork is a stub in
	// libc_nonshared.a that carries no CET marking and needs the start
	// files' __dso_handle. A handle of this library's own instead, which
	// record_unload hands to __cxa_finalize: that unregisters the handler
	// when the library is unloaded (dlclose), before a later fork would
	// call into unmapped code.
	__register_atfork(nullptr, nullptr, reset_in_child, &dso_handle);
	find_next(&next_execve, "execve");
	find_next(&next_execvpe, "execvpe");
	find_next(&next_execv, "execv");
	find_next(&next_execvp, "execvp");
	find_next(&next_fexecve, "fexecve");
	find_next(&next_exit, "_exit");
	find_next(&next_memcmp, "memcmp");
	find_next(&next_bcmp, "bcmp");
	find_next(&next_strlen, "strlen");
	find_next(&next_strcmp, "strcmp");
}

__attribute__((destructor(102))) void record_fini() { write_profile(); }

// After every other destructor of this library (at exit, or at dlclose).
__attribute__((destructor(101))) void record_unload() { __cxa_finalize(&dso_handle); }

} // namespace

#define EXPORT __attribute__((visibility("default")))

extern "C" {

// memcmp's order; strings: stop after a null.
static int byte_compare(const void *a, const void *b, size_t n, bool strings = false)
{
	const unsigned char *x = static_cast<const unsigned char *>(a), *y = static_cast<const unsigned char *>(b);
	for (size_t i = 0; i < n; i++) {
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
		if (strings && !x[i])
			break;
	}
	return 0;
}

// The three names most calls take: the slow path is a tail call, so the
// fast one needs no stack frame.
static __attribute__((noinline)) void *memcpy_slow(void *d, const void *s, size_t n)
{
	note_slow(e_memcpy, p_memcpy, d, s, n);
	return uarch::bound_memcpy(d, s, n);
}

static __attribute__((noinline)) void *memmove_slow(void *d, const void *s, size_t n)
{
	note_slow(e_memmove, p_memmove, d, s, n);
	return uarch::bound_memmove(d, s, n);
}

static __attribute__((noinline)) void *memset_slow(void *d, int c, size_t n)
{
	note_slow(e_memset, p_memset, d, nullptr, n);
	return uarch::bound_memset(d, c, n);
}

EXPORT void *memcpy(void *d, const void *s, size_t n)
{
	if (__builtin_expect(!uarch::relocated(), 0))
		return uarch::bound_memcpy(d, s, n);   // as note_cmp
	Block *b = tls_block;
	if (__builtin_expect(!b, 0))
		return memcpy_slow(d, s, n);
	note_into<false>(b, e_memcpy, p_memcpy, d, s, n);
	return uarch::bound_memcpy(d, s, n);
}

EXPORT void *memmove(void *d, const void *s, size_t n)
{
	if (__builtin_expect(!uarch::relocated(), 0))
		return uarch::bound_memmove(d, s, n);   // as note_cmp
	Block *b = tls_block;
	if (__builtin_expect(!b, 0))
		return memmove_slow(d, s, n);
	note_into<false>(b, e_memmove, p_memmove, d, s, n);
	return uarch::bound_memmove(d, s, n);
}

EXPORT void *memset(void *d, int c, size_t n)
{
	if (__builtin_expect(!uarch::relocated(), 0))
		return uarch::bound_memset(d, c, n);   // as note_cmp
	Block *b = tls_block;
	if (__builtin_expect(!b, 0))
		return memset_slow(d, c, n);
	note_into<false>(b, e_memset, p_memset, d, nullptr, n);
	return uarch::bound_memset(d, c, n);
}

// The comparisons: counted, then the C library's. Before the constructor
// found it (another library's constructor that ran first), a byte loop.
EXPORT int memcmp(const void *a, const void *b, size_t n)
{
	note_cmp(c_memcmp, n);
	if (MemcmpFn f = next_memcmp)
		return f(a, b, n);
	return byte_compare(a, b, n);
}

EXPORT int bcmp(const void *a, const void *b, size_t n)
{
	note_cmp(c_bcmp, n);
	if (MemcmpFn f = next_bcmp)
		return f(a, b, n);
	return byte_compare(a, b, n);
}

EXPORT size_t strlen(const char *s)
{
	size_t n = 0;
	if (StrlenFn f = next_strlen)
		n = f(s);
	else
		while (s[n])
			n++;
	note_cmp(c_strlen, n);
	return n;
}

EXPORT int strcmp(const char *a, const char *b)
{
	int r;
	if (StrcmpFn f = next_strcmp)
		r = f(a, b);
	else
		r = byte_compare(a, b, ~size_t(0), true);
	size_t n = 1;   // the bytes up to the first that differs or the null, counted after the call
	while (a[n - 1] == b[n - 1] && a[n - 1])
		n++;
	note_cmp(c_strcmp, n);
	return r;
}

} // extern "C"

// mempcpy, __mempcpy, bzero, explicit_bzero and the _chk forms, each
// counted under its own entry and folded into its op.
#define UARCH_RECORD_NOTE(name, op, d, s, n) note(e_##name, p_##op, d, s, n);
#define UARCH_LIBC_NAME(name, op, form) UARCH_LIBC_##form(, UARCH_RECORD_NOTE, name, op)
#include "table/libc_names.def"
#undef UARCH_LIBC_NAME

// exec: this image's counts are written first (the new image, which loads
// this library again, writes its own file), then the C library's function
// runs. The l forms gather their arguments on the stack, as the C
// library's own do.
namespace {

// Writes this image's counts, then runs the C library's function next
// (ENOSYS where it was not found).
template <class Fn, class... Args>
int write_then(Fn next, Args... args)
{
	write_profile();
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	return next(args...);
}

// The arguments from arg to the null pointer that ends them; envp, where
// asked, the pointer after it (execle).
#define UARCH_GATHER_ARGS(arg, argv, envp_out)                                        \
	va_list ap;                                                                    \
	size_t n = 0;   /* arguments after arg, before the null pointer */             \
	va_start(ap, arg);                                                             \
	if (arg)                                                                       \
		while (va_arg(ap, char *))                                             \
			n++;                                                           \
	va_end(ap);                                                                    \
	char **argv = static_cast<char **>(__builtin_alloca((n + 2) * sizeof(char *))); \
	argv[0] = const_cast<char *>(arg);                                             \
	va_start(ap, arg);                                                             \
	for (size_t i = 1; i <= n; i++)                                                \
		argv[i] = va_arg(ap, char *);                                          \
	argv[n + 1] = nullptr;                                                         \
	if (arg)                                                                       \
		(void)va_arg(ap, char *);   /* the null pointer */                     \
	envp_out;                                                                      \
	va_end(ap)

} // namespace

extern "C" {

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	return write_then(next_execve, path, argv, envp);
}

EXPORT int execv(const char *path, char *const argv[])
{
	return write_then(next_execv, path, argv);
}

EXPORT int execvp(const char *file, char *const argv[])
{
	return write_then(next_execvp, file, argv);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return write_then(next_execvpe, file, argv, envp);
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	return write_then(next_fexecve, fd, argv, envp);
}

EXPORT int execl(const char *path, const char *arg, ...)
{
	UARCH_GATHER_ARGS(arg, argv, (void)0);
	return write_then(next_execv, path, argv);
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
	UARCH_GATHER_ARGS(arg, argv, (void)0);
	return write_then(next_execvp, file, argv);
}

EXPORT int execle(const char *path, const char *arg, ...)
{
	char *const *envp;
	UARCH_GATHER_ARGS(arg, argv, envp = va_arg(ap, char *const *));
	return write_then(next_execve, path, argv, envp);
}

// _exit and _Exit (the same function, as in the C library) skip the
// destructor that writes at exit (a fork child often ends so); exit's own
// call to _exit, inside the C library, does not come here. In a vfork
// child write_profile does nothing.
[[noreturn]] EXPORT void _exit(int status)
{
	write_profile();
	if (next_exit)
		next_exit(status);
	uarch::sys::call6(nr_exit_group, status);
	__builtin_unreachable();
}

[[noreturn]] EXPORT void _Exit(int status) __attribute__((alias("_exit")));

} // extern "C"
