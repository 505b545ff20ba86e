// Raw Linux system calls: usable before the C library (or this library's
// own GOT) is ready, as in an ifunc resolver. Returns -errno on failure.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace uarch::sys {

#if defined(__x86_64__)
enum : long { nr_read = 0, nr_pread64 = 17, nr_close = 3, nr_futex = 202, nr_openat = 257, nr_sched_yield = 24,
	      nr_clock_gettime = 228, nr_sched_getaffinity = 204, nr_mprotect = 10, nr_getpid = 39,
	      nr_geteuid = 107, nr_write = 1, nr_mmap = 9, nr_getrusage = 98, nr_gettid = 186,
	      nr_exit_group = 231, nr_fstat = 5 };
constexpr long o_nofollow = 0400000;
constexpr uint32_t stat_off_mode = 24, stat_off_uid = 28, stat_off_size = 48;   // struct stat

static inline long call6(long n, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0, long f = 0)
{
	long ret;
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__aarch64__)
enum : long { nr_read = 63, nr_pread64 = 67, nr_close = 57, nr_futex = 98, nr_openat = 56, nr_sched_yield = 124,
	      nr_clock_gettime = 113, nr_sched_getaffinity = 123, nr_mprotect = 226, nr_getpid = 172,
	      nr_geteuid = 175, nr_write = 64, nr_mmap = 222, nr_getrusage = 165, nr_gettid = 178,
	      nr_exit_group = 94, nr_fstat = 80 };
constexpr long o_nofollow = 0100000;
constexpr uint32_t stat_off_mode = 16, stat_off_uid = 24, stat_off_size = 48;   // asm-generic struct stat

static inline long call6(long n, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0, long f = 0)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;
	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	return x0;
}
#else
#error "uarch: raw system calls are written for x86-64 and arm64 only"
#endif

constexpr long at_fdcwd = -100;
enum : long { prot_read = 1, prot_write = 2, prot_exec = 4 };

// A raw call's -errno (the kernel's returns are -4095..-1).
static inline bool failed(long ret) { return ret < 0 && ret > -4096; }
constexpr long o_rdonly_cloexec = 02000000;

static inline long open_read(const char *path) { return call6(nr_openat, at_fdcwd, long(path), o_rdonly_cloexec); }
static inline long read(long fd, void *buf, size_t n) { return call6(nr_read, fd, long(buf), long(n)); }
static inline long close(long fd) { return call6(nr_close, fd); }

} // namespace uarch::sys
