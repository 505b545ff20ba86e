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
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <sys/auxv.h>
#include "dispatch/bind.h"
#include "dispatch/libc_names.h"
#include "sys/sys.h"
#include "preload/record_format.h"

namespace {

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

// A thread's first call (claims a block) and every call of a thread beyond
// the pool (atomic adds into the overflow block).
__attribute__((noinline)) void note_slow(Entry e, OpIndex op, const void *d, const void *s, size_t n)
{
	if (!tls_overflow) {
		uint32_t i = __atomic_fetch_add(&pool_used, 1, __ATOMIC_RELAXED);
		if (i < pool_blocks) {
			tls_block = &pool[i];
			note_into<false>(tls_block, e, op, d, s, n);
			return;
		}
		tls_overflow = true;
		__atomic_fetch_add(&overflow_threads, 1, __ATOMIC_RELAXED);
	}
	note_into<true>(&pool[pool_blocks], e, op, d, s, n);
}

inline void note(Entry e, OpIndex op, const void *d, const void *s, size_t n)
{
	if (Block *b = tls_block)
		note_into<false>(b, e, op, d, s, n);
	else
		note_slow(e, op, d, s, n);
}

#if defined(__x86_64__)
enum : long { nr_write = 1, nr_getpid = 39, nr_gettid = 186, nr_exit_group = 231 };
#elif defined(__aarch64__)
enum : long { nr_write = 64, nr_getpid = 172, nr_gettid = 178, nr_exit_group = 94 };
#endif

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

// Opens this image's file: the one it wrote before (an exec that failed,
// then exit), else a new one, <prefix><pid>.uprof or the first free
// <prefix><pid>-<k>.uprof: never another image's.
long open_own_file(long pid)
{
	enum : long { o_wronly = 01, o_creat = 0100, o_excl = 0200, o_trunc = 01000, o_cloexec = 02000000 };
	if (own_path[0])
		return uarch::sys::call6(uarch::sys::nr_openat, uarch::sys::at_fdcwd, long(own_path),
					 o_wronly | o_trunc | o_cloexec, 0644);
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
					    o_wronly | o_creat | o_excl | o_cloexec, 0644);
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
		if (!calls)
			continue;   // a thread that forked away, or reset in a child
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

template <class Fn>
void find_next(Fn *fn, const char *name)
{
	*fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

extern "C" char **environ;

// UARCH_PROF_OUT names where files are created: ignored in a set-id or
// file-capability program (AT_SECURE), as the tunables are, where the
// library came in through /etc/ld.so.preload.
__attribute__((constructor(102))) void record_init()
{
	const char *key = "UARCH_PROF_OUT=";
	for (char **e = getauxval(AT_SECURE) ? nullptr : environ; e && *e; e++) {
		const char *v = *e, *k = key;
		while (*k && *v == *k)
			v++, k++;
		if (*k)
			continue;
		size_t l = 0;
		while (v[l] && l < sizeof out_prefix - 1) {
			out_prefix[l] = v[l];
			l++;
		}
		out_prefix[l] = 0;
		break;
	}
	owner_pid = uarch::sys::call6(nr_getpid);
	pthread_atfork(nullptr, nullptr, reset_in_child);
	find_next(&next_execve, "execve");
	find_next(&next_execvpe, "execvpe");
	find_next(&next_execv, "execv");
	find_next(&next_execvp, "execvp");
	find_next(&next_fexecve, "fexecve");
	find_next(&next_exit, "_exit");
}

__attribute__((destructor(102))) void record_fini() { write_profile(); }

} // namespace

#define EXPORT __attribute__((visibility("default")))

extern "C" {

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
	Block *b = tls_block;
	if (__builtin_expect(!b, 0))
		return memcpy_slow(d, s, n);
	note_into<false>(b, e_memcpy, p_memcpy, d, s, n);
	return uarch::bound_memcpy(d, s, n);
}

EXPORT void *memmove(void *d, const void *s, size_t n)
{
	Block *b = tls_block;
	if (__builtin_expect(!b, 0))
		return memmove_slow(d, s, n);
	note_into<false>(b, e_memmove, p_memmove, d, s, n);
	return uarch::bound_memmove(d, s, n);
}

EXPORT void *memset(void *d, int c, size_t n)
{
	Block *b = tls_block;
	if (__builtin_expect(!b, 0))
		return memset_slow(d, c, n);
	note_into<false>(b, e_memset, p_memset, d, nullptr, n);
	return uarch::bound_memset(d, c, n);
}

} // extern "C"

// mempcpy, __mempcpy, bzero, explicit_bzero and the _chk forms, each
// counted under its own entry and folded into its op.
#define UARCH_RECORD_NOTE(name, op, d, s, n) note(e_##name, p_##op, d, s, n);
UARCH_LIBC_NAMES(, UARCH_RECORD_NOTE)

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
