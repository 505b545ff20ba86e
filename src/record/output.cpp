// The recorder's files and its life in a process: load, fork, exit and
// unload (output.h).
#include "record/output.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/auxv.h>
#include "record/counts.h"
#include "record/interposers.h"
#include "record/trace.h"
#include "sys/sys.h"

extern "C" int __register_atfork(void (*prepare)(), void (*parent)(), void (*child)(), void *dso_handle);
extern "C" void __cxa_finalize(void *dso_handle);
extern "C" char **environ;

namespace uarch::record {

namespace {

// This library's handle for the C library's per-library registrations
// (the start files' __dso_handle, which -nostartfiles leaves out).
char dso_handle;

char out_prefix[4096];           // from UARCH_PROF_OUT at load; empty: write nothing
char own_path[sizeof out_prefix + 32];   // the file this image wrote; empty: none yet
long owner_pid;                  // whose counts the blocks hold: set at load and in a fork child
long writer_tid;                 // the thread in write_profile (merged is shared); 0: none
Counts merged;                   // static: no heap, and too big for a thread's stack

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

// Opens this image's file: the one it wrote before (an exec that failed,
// then exit), else a new one, <prefix><pid>.uprof or the first free
// <prefix><pid>-<k>.uprof: never another image's.
long open_own_file(long pid)
{
	if (own_path[0])
		return open_output(own_path, true);
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
		long fd = open_output(path, false);
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
	constexpr Entry end[p_op_count] = {e_memmove, e_memset, prof::entry_count};
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
	sys::close(fd);
}

// The trace beside the profile: own_path with .utrace for .uprof (the
// profile's O_EXCL create made the name this image's).
void write_trace_beside(long pid)
{
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
	write_trace(path, pid);
}

// In a fork child: the counts so far are the parent's. The child is its
// own process: its own file, and its own count of overflow threads.
void reset_in_child()
{
	reset_counts_in_child();
	trace.next = 0;   // the child's calls from index 0; the parent's records stay unread
	own_path[0] = 0;
	writer_tid = 0;   // another thread of the parent's may have been writing
	owner_pid = sys::call6(sys::nr_getpid);
}

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

// UARCH_PROF_TRACE=N (1 to 2^32 records): the trace's region, N records,
// touched only as calls fill it.
void trace_from_env()
{
	const char *v = env_value("UARCH_PROF_TRACE="), *keep = env_value("UARCH_PROF_TRACE_KEEP=");
	if (!v || !*v)
		return;
	uint64_t n = 0;
	for (; *v >= '0' && *v <= '9' && n <= (uint64_t(1) << 32); v++)
		n = n * 10 + uint64_t(*v - '0');
	if (!*v)
		trace_start(n, keep && same_text(keep, "last"));
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
	owner_pid = sys::call6(sys::nr_getpid);
	if (out_prefix[0])
		trace_from_env();
	// glibc's own registration: pthread_atfork is a stub in
	// libc_nonshared.a that carries no CET marking and needs the start
	// files' __dso_handle. A handle of this library's own instead, which
	// record_unload hands to __cxa_finalize: that unregisters the handler
	// when the library is unloaded (dlclose), before a later fork would
	// call into unmapped code.
	__register_atfork(nullptr, nullptr, reset_in_child, &dso_handle);
	find_next_functions();
}

__attribute__((destructor(102))) void record_fini() { write_profile(); }

// After every other destructor of this library (at exit, or at dlclose).
__attribute__((destructor(101))) void record_unload() { __cxa_finalize(&dso_handle); }

} // namespace

bool write_all(long fd, const void *p, uint64_t n)
{
	const char *c = static_cast<const char *>(p);
	while (n) {
		long w = sys::call6(sys::nr_write, fd, long(c), long(n));
		if (w == -EINTR)
			continue;
		if (w <= 0)
			return false;
		c += w;
		n -= uint64_t(w);
	}
	return true;
}

long open_output(const char *path, bool reopen)
{
	constexpr long create = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	constexpr long again = O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC;
	return sys::call6(sys::nr_openat, sys::at_fdcwd, long(path), reopen ? again : create, 0600);
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
	long pid = sys::call6(sys::nr_getpid);
	if (pid != owner_pid)
		return;
	long tid = sys::call6(sys::nr_gettid), none = 0;
	while (!__atomic_compare_exchange_n(&writer_tid, &none, tid, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		if (none == tid)
			return;
		none = 0;
		sys::call6(sys::nr_sched_yield);
	}
	write_merged(pid);
	if (own_path[0])
		write_trace_beside(pid);
	__atomic_store_n(&writer_tid, 0, __ATOMIC_RELEASE);
}

} // namespace uarch::record
