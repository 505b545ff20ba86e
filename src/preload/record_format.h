// The profile that libuarch_record.so writes and uarch-prof reads: one file
// per process, a header and then the payload (a Counts, native byte order).
// A reader accepts a file only if the magic, version, sizes and the FNV-1a
// checksum of the payload all match, so a truncated or damaged file is
// refused rather than misread.
#pragma once
#include <stdint.h>

namespace uarch::prof {

// Version 2 added __explicit_bzero_chk, the last entry; uarch-prof reads
// version 1 files too (their payload is that one entry shorter).
constexpr uint32_t version = 2;
// Sizes 0..exact_max are counted exactly; above, by floor(log2(size)) in
// slot exact_max + 1 + log2 (only log2 >= 12 occur there).
constexpr uint32_t exact_max = 4096;
constexpr uint32_t size_slots = exact_max + 1 + 64;

enum OpIndex : uint32_t { p_memcpy, p_memmove, p_memset, p_op_count };

// Every name the recording library exports, folded into its op.
enum Entry : uint32_t {
	e_memcpy, e_mempcpy, e___mempcpy, e___memcpy_chk, e___mempcpy_chk,
	e_memmove, e___memmove_chk,
	e_memset, e_bzero, e_explicit_bzero, e___memset_chk, e___explicit_bzero_chk,
	entry_count
};

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

struct Counts {
	uint64_t entry[entry_count];
	OpCounts op[p_op_count];
};

struct Header {
	char magic[8];               // "UARCHPRF"
	uint32_t version;
	uint32_t header_bytes;       // sizeof(Header)
	uint64_t payload_bytes;      // sizeof(Counts)
	uint64_t checksum;           // FNV-1a 64 of the payload
	uint64_t processes;          // processes merged into this file
	uint64_t threads;            // threads that called any of the names
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

} // namespace uarch::prof
