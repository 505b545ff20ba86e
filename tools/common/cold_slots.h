// Destinations out of the cache, as uarch-bench mem's cold rows and
// uarch-tune --cold place them: each call writes the next slot of a pool
// twice the L3, the slots in a shuffled order, so that a slot comes round
// again only after the whole pool was written. That is a copy into memory
// the program has not touched lately (a fresh allocation, a buffer
// recycled from far away), which a reused buffer never shows: on the Zen
// 5 guest (family 0x1a model 2) the avx512 loop copied 16 KiB in 0.70x
// rep movsb's time into a reused buffer and in 1.5x it into cold ones.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <algorithm>
#include <random>
#include <vector>

namespace uarch::tools {

// Twice the L3 (glibc's sysconf reports what its loader found), 64 MiB
// where it says nothing, at most 512 MiB.
inline size_t cold_pool_bytes()
{
	long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
	size_t pool = l3 > 0 ? 2 * size_t(l3) : size_t(64) << 20;
	return std::min(std::max(pool, size_t(64) << 20), size_t(512) << 20);
}

// The slots' offsets in a pool of `pool` bytes for calls of n bytes, in
// the order the calls visit them. Seven lines between slots: no
// power-of-two stride that would crowd them into a few cache sets, and a
// pass still writes most of the pool (70% at 1 KiB, 90% at 4 KiB). At
// least one slot (n < pool).
inline std::vector<uint32_t> cold_slots(size_t n, size_t pool, uint64_t seed)
{
	size_t stride = (n + 63) / 64 * 64 + 448;
	std::vector<uint32_t> off;
	for (size_t o = 0; o == 0 || o + stride <= pool; o += stride)
		off.push_back(uint32_t(o));
	std::shuffle(off.begin(), off.end(), std::mt19937_64(seed));
	return off;
}

} // namespace uarch::tools
