// Reading profiles written by libuarch_record.so (see
// src/record/format.h), for uarch-prof and uarch-bench.
#pragma once
#include <memory>
#include <string>
#include "record/format.h"

namespace uarch::prof {

struct Profile {
	Header header{};
	Counts counts{};
};

// Reads and checks one file. On failure returns false and sets *why.
bool load(const std::string &path, Profile *out, std::string *why);
// Adds b's counts (and processes, threads) into a; false, a unchanged,
// where a total would overflow 64 bits.
bool merge(Profile *a, const Profile &b);
// Writes a file as the recorder does (header with checksum, payload).
bool save(const std::string &path, const Profile &p, std::string *why);

const char *entry_name(uint32_t e);
const char *op_name(uint32_t op);
const char *cmp_name(uint32_t c);
// The entry's op.
uint32_t entry_op(uint32_t e);
// Lowest and highest size a size slot holds.
uint64_t slot_lo(uint32_t slot);
uint64_t slot_hi(uint32_t slot);

} // namespace uarch::prof
