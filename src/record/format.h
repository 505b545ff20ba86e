// The profile that libuarch_record.so writes and uarch-prof reads: one file
// per process, a header and then the payload (a Counts, native byte order).
// A reader accepts a file only if the magic, version, sizes and the FNV-1a
// checksum of the payload all match, so a truncated or damaged file is
// refused rather than misread.
#pragma once
#include <stdint.h>

namespace uarch::prof {

// Version 2 added __explicit_bzero_chk, the last entry; version 3 the
// comparison and string counts (Cmp, at the payload's end). uarch-prof
// reads versions 1 and 2 too (their payload is shorter; what they lack
// reads as 0).
constexpr uint32_t version = 3;
// Sizes 0..exact_max are counted exactly; above, by floor(log2(size)) in
// slot exact_max + 1 + log2 (only log2 >= 12 occur there).
constexpr uint32_t exact_max = 4096;
constexpr uint32_t size_slots = exact_max + 1 + 64;

enum OpIndex : uint32_t { p_memcpy, p_memmove, p_memset, p_op_count };

// Every name the recording library exports, folded into its op.
enum Entry : uint32_t {
#define UARCH_LIBC_NAME(name, op, form) e_##name,
#include "table/libc_names.def"
#undef UARCH_LIBC_NAME
	entry_count
};
static_assert(entry_count == 12, "every profile holds 12 entries: a new name needs a new version");

// memmove only. forward: dst < src and the ranges overlap (a front-to-back
// copy is safe); backward: dst > src and they overlap; same: dst == src.
enum Overlap : uint32_t { ov_disjoint, ov_forward, ov_backward, ov_same, overlap_count };

struct OpCounts {
	uint64_t size[size_slots];
	uint64_t big_bytes;          // sum of the sizes above exact_max
	uint64_t dst_align[64];      // dst modulo 64
	uint64_t src_align[64];      // src modulo 64 (not for memset)
	uint64_t overlap[overlap_count];
};

// memcmp, bcmp, strlen and strcmp: counted, then passed on to the C
// library's own. Bytes: memcmp and bcmp their length argument; strlen the
// length it returned; strcmp the bytes up to and including the first that
// differs or the terminating null.
enum CmpIndex : uint32_t { c_memcmp, c_bcmp, c_strlen, c_strcmp, cmp_count };

struct CmpCounts {
	uint64_t calls[cmp_count];
	uint64_t bytes[cmp_count];
};

struct Counts {
	uint64_t entry[entry_count];
	OpCounts op[p_op_count];
	CmpCounts cmp;               // version 3
};

struct Header {
	char magic[8];               // "UARCHPRF"
	uint32_t version;
	uint32_t header_bytes;       // sizeof(Header)
	uint64_t payload_bytes;      // sizeof(Counts)
	uint64_t checksum;           // FNV-1a 64 of the payload
	uint64_t processes;          // processes merged into this file
	uint64_t threads;            // threads that called any of the memcpy family's names
};

static inline uint64_t fnv1a(const void *p, uint64_t n)
{
	const unsigned char *b = static_cast<const unsigned char *>(p);
	uint64_t h = 0xcbf29ce484222325ull;
	for (uint64_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static inline uint32_t size_slot(uint64_t n)
{
	return n <= exact_max ? uint32_t(n) : exact_max + 1 + uint32_t(63 - __builtin_clzll(n));
}

// The trace (uarch-prof --trace N): one file per process image beside its
// profile, <pid>.utrace, written at the same moments. It is the header and
// then `records` TraceRecords of the memcpy family's calls (no
// comparisons), in the order the calls took their index: one atomic add
// per call on a process-wide counter. keep first: the first `budget`
// calls; keep last: a ring, the last `budget`. A record whose seq is not
// the one its place in the file asks for was being written when the file
// was (a thread still copying, or a ring slot overwritten meanwhile): a
// reader drops it. uarch-prof merges the processes' files into one: their
// sections (header and records) one after another, by start time.
constexpr uint32_t trace_version = 1;
enum TraceKeep : uint32_t { keep_first, keep_last };

struct TraceHeader {
	char magic[8];               // "UARCHTRC"
	uint32_t version;            // trace_version
	uint32_t header_bytes;       // sizeof(TraceHeader)
	uint32_t record_bytes;       // sizeof(TraceRecord)
	uint32_t keep;               // TraceKeep
	uint64_t budget;             // the most records a process keeps
	uint64_t tick_hz;            // ticks per second of TraceRecord::gap and overhead_ticks
	uint64_t cpu_ns;             // the process's user + system CPU time at write time (getrusage)
	uint64_t calls;              // calls of the memcpy family the process made
	uint64_t records;            // TraceRecords that follow
	uint64_t dropped;            // calls - complete records (past the budget, or incomplete)
	uint64_t pid;
	uint64_t start_ns;           // CLOCK_MONOTONIC when the image loaded the recorder
	uint64_t overhead_ticks_x16; // 16 x the ticks recording adds to one call (timed at write)
};

struct TraceRecord {
	uint64_t seq;                // 1 + the call's index in the process; 0: never completed
	uint64_t dst;
	uint64_t src;                // 0 for the memset family
	uint64_t size;
	uint64_t gap;                // ticks since the same thread's previous call of the family; 0: its first
	uint32_t tid;                // the thread's number in its process, in the order of first calls (1, 2, ...)
	uint32_t entry;              // Entry
};

static_assert(sizeof(TraceHeader) == 96 && sizeof(TraceRecord) == 48, "the trace layout is fixed");

} // namespace uarch::prof
