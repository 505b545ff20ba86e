// The ops and variants of ops.def as C++: enums, names, what each variant
// needs. Plain data and pure functions, freestanding (they run inside ifunc
// resolvers): names are char arrays, not pointer tables.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "probe/cpu.h"

namespace uarch {

enum Op : uint8_t {
#define UARCH_OP(name, ret, params, args) op_##name,
#define UARCH_POLICY_OP(name) op_##name,
#include "table/ops.def"
	op_count
};

// The ops bound to a function: the first op_bound_count of Op.
constexpr uint32_t op_bound_count = 0
#define UARCH_OP(name, ret, params, args) + 1
#include "table/ops.def"
	;

// Every variant of every op, across architectures.
enum class Impl : uint8_t {
#define UARCH_IMPL(name, str) name,
#include "table/ops.def"
	count
};

// The signature of each bound op: op_memcpy_fn is void *(void *, const void *, size_t).
#define UARCH_OP(name, ret, params, args) using op_##name##_fn = ret params;
#include "table/ops.def"

// Whether the n bytes at s spell the NUL-terminated name z. Freestanding
// (no strncmp): the parser and the policy run inside resolvers.
bool name_equal(const char *s, size_t n, const char *z);

const char *op_name(uint32_t op);             // "memcpy", ...; nullptr past op_count
bool op_from_name(const char *s, size_t len, Op *out);
const char *impl_name(Impl i);                // the string uarch_impl() returns
bool impl_from_name(const char *s, size_t len, Impl *out);

// One row of ops.def.
struct Variant {
	Op op;
	Impl impl;
	Arch arch;          // Arch::unknown: any architecture
	uint64_t needs;     // 1 << Feature, every bit required
};
uint32_t variant_count();
const Variant &variant_at(uint32_t i);   // i < variant_count()

// Can this CPU run this variant of this op? (The policy never binds, and
// tests never call, a variant for which this is false.)
bool impl_runs_on(Op op, Impl impl, const Cpu &cpu);

} // namespace uarch
