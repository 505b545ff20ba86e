/* uarch: CPU-specific fast paths for user space, chosen once at load time.
 *
 * One header, plain C (C99 or later, or C++). Link with -luarch (pkg-config
 * uarch), statically with libuarch.a, or replace the C library's memcpy
 * family in an unmodified program with LD_PRELOAD=libuarch_preload.so.
 */
#ifndef UARCH_H
#define UARCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UARCH_VERSION_MAJOR 0
#define UARCH_VERSION_MINOR 1

#if defined(__GNUC__)
#define UARCH_API __attribute__((visibility("default")))
#else
#define UARCH_API
#endif

/* Copies n bytes. Like glibc's on x86-64 it gives memmove's result when the
 * buffers overlap, because programs rely on that. n == 0 touches no memory. */
UARCH_API void *uarch_memcpy(void *dst, const void *src, size_t n);
UARCH_API void *uarch_memmove(void *dst, const void *src, size_t n);
UARCH_API void *uarch_memset(void *dst, int c, size_t n);

/* Prefetches every cache line of [p, p + len). Never faults, whatever p is. */
UARCH_API void uarch_prefetch_range(const void *p, size_t len);

/* Waits while *addr == expected. Returns 0 once a different value was seen
 * or a wake arrived (which may be spurious: re-check your condition),
 * ETIMEDOUT after timeout_ns (< 0: forever; never earlier), EINVAL for a
 * NULL or misaligned addr. A wait that sleeps in the kernel may end late by
 * the thread's timer slack (50 us by default; prctl PR_SET_TIMERSLACK) and
 * the wake-up; one that would sleep with less than 50 us left waits that
 * out awake instead, unless the policy never waits awake (one CPU,
 * idle_wait=futex, a spin budget of 0).
 *
 * uarch_idle_wait and uarch_idle_wake are private to one process AND to one
 * copy of the library: the futex is keyed by the process, and the count of
 * sleepers that lets a wake skip the system call lives inside the library.
 * A waiter in memory shared with another process, or a waker that calls
 * another copy of uarch (a plugin linked with libuarch.a next to
 * libuarch.so), may sleep until its timeout. Use uarch_idle_word there. */
UARCH_API int uarch_idle_wait(const uint32_t *addr, uint32_t expected, int64_t timeout_ns);
/* Call after storing a new value to *addr: wakes up to count waiters
 * (INT_MAX for all). Makes no system call when nobody sleeps. Returns the
 * number of sleepers woken in the kernel, or -EINVAL for a NULL or
 * misaligned addr. Process- and copy-private, as above.
 *
 * One convention for the four: a wait returns 0, ETIMEDOUT or EINVAL (a
 * positive errno, as pthread_cond_timedwait does); a wake returns the count
 * woken (>= 0) or -EINVAL (a negative errno, where a count is the result). */
UARCH_API int uarch_idle_wake(uint32_t *addr, int count);

/* A word to wait on across processes (MAP_SHARED, memfd, shm) and across
 * copies of the library in one process. Place it anywhere both sides can
 * see, zeroed (or value set as you like and sleepers 0); 8-byte aligned.
 * `value` is yours: store to it, then call uarch_idle_wake_shared.
 * `sleepers` belongs to the library: it counts the waiters sleeping in the
 * kernel, so that a wake with nobody asleep makes no system call; never
 * write it. (A process that dies asleep leaves it counted: later wakes then
 * make one needless system call each, nothing is lost.) */
typedef struct uarch_idle_word {
	uint32_t value;
	uint32_t sleepers;
}
#if defined(__GNUC__)
__attribute__((aligned(8)))
#endif
uarch_idle_word;

/* As uarch_idle_wait, on w->value: 0, ETIMEDOUT (never early), or EINVAL
 * for a NULL or not 8-aligned w. Works whichever process or library copy
 * stores and wakes. */
UARCH_API int uarch_idle_wait_shared(uarch_idle_word *w, uint32_t expected, int64_t timeout_ns);
/* Call after storing a new value to w->value: wakes up to count waiters
 * (INT_MAX for all) in any process; no system call when nobody sleeps.
 * Returns the number woken in the kernel, or -EINVAL (NULL, misaligned). */
UARCH_API int uarch_idle_wake_shared(uarch_idle_word *w, int count);

/* Name of the variant bound to op ("memcpy", "memmove", "memset", "smp_mb",
 * "prefetch_range", "prefetchw", "idle_wait"); NULL for an unknown op. */
UARCH_API const char *uarch_impl(const char *op);
/* The name of op number i, 0 <= i, in the order uarch-info lists them
 * ("memcpy" first); NULL past the last. Loop over it with uarch_impl to see
 * every binding without a list of your own. */
UARCH_API const char *uarch_op(unsigned i);

/* Barriers, cpu_relax and prefetch are inline assembly, so no compiler flag
 * (clang's -mno-sse drops __builtin_prefetch) can remove them and no call is
 * made. The library exports functions of the same names for FFI and dlsym;
 * define UARCH_NO_INLINE to call those instead.
 *
 * uarch_smp_mb: full barrier between ordinary memory accesses (stores
 *   before it are visible to all CPUs before any load after it).
 * uarch_smp_rmb / uarch_smp_wmb: loads before loads / stores before stores.
 * uarch_cpu_relax: the spin-wait hint.
 * uarch_prefetch / uarch_prefetchw: bring the line of p close for a read /
 *   a write. Never fault, whatever p is (NULL, unmapped, kernel addresses). */
#if defined(UARCH_BUILDING_LIBRARY) || defined(UARCH_NO_INLINE)
UARCH_API void uarch_smp_mb(void);
UARCH_API void uarch_smp_rmb(void);
UARCH_API void uarch_smp_wmb(void);
UARCH_API void uarch_cpu_relax(void);
UARCH_API void uarch_prefetch(const void *p);
UARCH_API void uarch_prefetchw(const void *p);
#elif defined(__x86_64__)
/* A locked RMW is a full barrier for ordinary memory, cheaper than mfence
 * (seed 003). It adds 0 to a slot below the 128-byte red zone: never a live
 * spill of the caller, never the return address the next ret loads (either
 * would make that load wait for the locked op). rsp is 8-aligned, so the 4
 * bytes never split a cache line. Unlike mfence it does not order clflush,
 * non-temporal stores or write-combining memory: use mfence there.
 * Valgrind's memcheck reports the access as "132 bytes below stack
 * pointer": run it with --ignore-range-below-sp=132-129, or build with
 * -DUARCH_NO_INLINE (the exported function, a frame of its own, uses a
 * slot in its own red zone, which memcheck accepts). */
static inline void uarch_smp_mb(void)
{
	__asm__ __volatile__("lock; addl $0,-132(%%rsp)" ::: "memory", "cc");
}
/* x86 is TSO for ordinary (write-back) memory: loads are not reordered with
 * older loads, stores not with older stores, so only the compiler must be
 * stopped. Non-temporal stores are the exception: they need sfence. */
static inline void uarch_smp_rmb(void) { __asm__ __volatile__("" ::: "memory"); }
static inline void uarch_smp_wmb(void) { __asm__ __volatile__("" ::: "memory"); }
static inline void uarch_cpu_relax(void) { __asm__ __volatile__("pause" ::: "memory"); }
/* prefetcht0 exists on every x86-64 CPU. The "m" operand only names the
 * address (the compiler may fold an offset into it); nothing is loaded. */
static inline void uarch_prefetch(const void *p)
{
	__asm__ __volatile__("prefetcht0 %0" :: "m"(*(const char *)p));
}
/* Requires PREFETCHW (CPUID 0x80000001 ECX bit 8): every AMD64 CPU, Intel
 * since Broadwell. Older Intel CPUs have run the encoding as a NOP, but no
 * manual promises it; the exported uarch_prefetchw is dispatched and uses
 * prefetcht0 where the bit is clear. */
static inline void uarch_prefetchw(const void *p)
{
	__asm__ __volatile__("prefetchw %0" :: "m"(*(const char *)p));
}
#elif defined(__aarch64__)
/* Inner-shareable barriers: every CPU that runs this process's threads. */
static inline void uarch_smp_mb(void) { __asm__ __volatile__("dmb ish" ::: "memory"); }
static inline void uarch_smp_rmb(void) { __asm__ __volatile__("dmb ishld" ::: "memory"); }
static inline void uarch_smp_wmb(void) { __asm__ __volatile__("dmb ishst" ::: "memory"); }
/* yield is a hint an SMT core or a hypervisor can act on; on most cores it
 * is a NOP, which is what a spin loop wants too (isb, which stalls longer,
 * is the alternative; not yet measured). */
static inline void uarch_cpu_relax(void) { __asm__ __volatile__("yield" ::: "memory"); }
/* "p" and %a0 print the address as [xN]; nothing is loaded. */
static inline void uarch_prefetch(const void *p)
{
	__asm__ __volatile__("prfm pldl1keep, %a0" :: "p"(p));
}
static inline void uarch_prefetchw(const void *p)
{
	__asm__ __volatile__("prfm pstl1keep, %a0" :: "p"(p));
}
#else
UARCH_API void uarch_smp_mb(void);
UARCH_API void uarch_smp_rmb(void);
UARCH_API void uarch_smp_wmb(void);
UARCH_API void uarch_cpu_relax(void);
UARCH_API void uarch_prefetch(const void *p);
UARCH_API void uarch_prefetchw(const void *p);
#endif

#ifdef __cplusplus
}
#endif
#endif /* UARCH_H */
