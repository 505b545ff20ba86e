// libuarch_record.so's names: the C library's memcpy family, as in
// libuarch_preload.so, each counted (counts.h) before it goes to the bound
// variant; memcmp, bcmp, strlen and strcmp counted (calls, bytes) and
// passed on to the C library's, found at load; exec and _exit, before
// which this image's files are written (output.h). A process killed by a
// signal, or ending by a raw exit system call, writes nothing.
#include "record/interposers.h"
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include "dispatch/bind.h"
#include "dispatch/libc_names.h"
#include "record/counts.h"
#include "record/output.h"
#include "sys/sys.h"

using namespace uarch::record;

namespace {

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

} // namespace

void uarch::record::find_next_functions()
{
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
	uarch::sys::call6(uarch::sys::nr_exit_group, status);
	__builtin_unreachable();
}

[[noreturn]] EXPORT void _Exit(int status) __attribute__((alias("_exit")));

} // extern "C"
