// Names and requirements from ops.def. Char arrays and plain structs only:
// a table of pointers would need load-time relocations, and resolvers read
// these before the library is relocated.
#include "table/table.h"

namespace uarch {

static const char op_names[op_count][16] = {
#define UARCH_OP(name, ret, params, args) #name,
#define UARCH_POLICY_OP(name) #name,
#include "table/ops.def"
};

static const char impl_names[uint32_t(Impl::count)][12] = {
#define UARCH_IMPL(name, str) str,
#include "table/ops.def"
};

#define F(f) (uint64_t(1) << f_##f)
static const Variant variants[] = {
#define UARCH_VARIANT(op, impl, arch, needs, symbol, source) {op_##op, Impl::impl, UARCH_TABLE_ARCH_##arch, needs},
#define UARCH_POLICY(op, impl) {op_##op, Impl::impl, Arch::unknown, 0},
#define UARCH_TABLE_ARCH_any Arch::unknown
#define UARCH_TABLE_ARCH_x86_64 Arch::x86_64
#define UARCH_TABLE_ARCH_aarch64 Arch::aarch64
#include "table/ops.def"
};
#undef F

bool name_equal(const char *a, size_t n, const char *z)
{
	size_t i = 0;
	for (; i < n; i++)
		if (z[i] == 0 || z[i] != a[i])
			return false;
	return z[i] == 0;
}

const char *op_name(uint32_t op) { return op < op_count ? op_names[op] : nullptr; }

const char *impl_name(Impl i)
{
	return uint32_t(i) < uint32_t(Impl::count) ? impl_names[uint32_t(i)] : impl_names[0];
}

bool op_from_name(const char *s, size_t len, Op *out)
{
	for (uint32_t i = 0; i < op_count; i++)
		if (name_equal(s, len, op_names[i])) {
			*out = Op(i);
			return true;
		}
	return false;
}

bool impl_from_name(const char *s, size_t len, Impl *out)
{
	for (uint32_t i = 1; i < uint32_t(Impl::count); i++)   // never "none"
		if (name_equal(s, len, impl_names[i])) {
			*out = Impl(i);
			return true;
		}
	return false;
}

uint32_t variant_count() { return sizeof variants / sizeof variants[0]; }
const Variant &variant_at(uint32_t i) { return variants[i]; }

bool impl_runs_on(Op op, Impl impl, const Cpu &c)
{
	for (const Variant &v : variants)
		if (v.op == op && v.impl == impl && (v.arch == Arch::unknown || v.arch == c.arch))
			return (c.features & v.needs) == v.needs;
	return false;
}

} // namespace uarch
