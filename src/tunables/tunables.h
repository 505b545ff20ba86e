// UARCH_TUNABLES: "key=value:key=value...". A pure, bounded parser: it reads
// at most max_input bytes, allocates nothing, never fails as a whole. A
// malformed or unknown entry is ignored whole and recorded, so uarch-info can
// show what was rejected and why.
//
// Keys:
//   memcpy, memmove, memset, ... (every bound op of table/ops.def)=<variant>
//   mask=-feat[,-feat...]      disable CPU features (never enables one)
//   rep_movsb_threshold, rep_movsb_stop, rep_stosb_threshold, rep_stosb_stop,
//   nt_threshold, nt_fill_threshold, prefetch_stride, idle_spin_ns,
//   idle_monitor_ns=<number>
//       decimal or 0x hex, optional K/M/G suffix (x1024)
//   idle_stages=<stage>[,<stage>...]   e.g. spin,futex
//   idle_c01=0|1
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "table/table.h"

namespace uarch {

enum class Key : uint8_t {
	none,
	// One key per bound op (table/ops.def), in Op order: its variant name.
#define UARCH_OP(name, ret, params, args) name,
#include "table/ops.def"
	mask,
	rep_movsb_threshold, rep_movsb_stop, rep_stosb_threshold, rep_stosb_stop,
	nt_threshold, nt_fill_threshold, prefetch_stride, idle_spin_ns, idle_monitor_ns,
	idle_stages, idle_c01,
	count
};
const char *key_name(Key k);
// The op a variant key names (Key::memcpy -> op_memcpy); false for other keys.
inline bool key_op(Key k, Op *op)
{
	uint32_t i = uint32_t(k) - 1;
	if (k == Key::none || i >= op_bound_count)
		return false;
	*op = Op(i);
	return true;
}

enum class Verdict : uint8_t {
	applied,
	overridden,        // a later entry with the same key wins
	empty,             // "::" or a trailing ':'
	no_equals,
	unknown_key,
	bad_value,         // not a number, out of range, unknown feature, '+feat'...
	too_many,          // past max_entries
	truncated,         // the input was longer than max_input
};
const char *verdict_text(Verdict v);

struct Entry {
	Key key;
	Verdict verdict;
	uint32_t offset, length;   // of the whole "key=value" in the input
	uint32_t value_offset, value_length;
	uint64_t number;           // numeric keys, idle_c01
	uint64_t features;         // mask: bits to clear (1 << Feature)
};

struct Tunables {
	// The largest number a value may be, and what "inf" means: every
	// threshold is a size or a duration, and the bound keeps arithmetic
	// on it safe.
	static constexpr uint64_t max_number = uint64_t(1) << 48;
	static constexpr uint32_t max_entries = 32;
	static constexpr uint32_t max_input = 16384;
	const char *input;         // the string parsed (not copied)
	uint32_t input_length;     // bytes considered (<= max_input)
	uint32_t nentries;
	uint32_t ndropped;         // entries past max_entries (not stored)
	Entry entries[max_entries];

	// The applied entry for k, or nullptr.
	const Entry *find(Key k) const;
	uint64_t mask() const;     // union of applied mask entries
};

// Parses s (NUL-terminated or up to len bytes, whichever is first). s may be
// nullptr (no tunables). secure: AT_SECURE process: everything is ignored.
void parse_tunables(const char *s, size_t len, Tunables *out);

} // namespace uarch
