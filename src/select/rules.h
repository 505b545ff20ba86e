// The x86-64 copy and fill thresholds as data: one table of rules, each
// row a condition on the CPU and the memcpy variant chosen for it, the
// thresholds it gives, and the measurements it rests on
// (docs/measurements/policy-evidence.md, one section per row). Plain
// integers only: select_plan reads the table inside ifunc resolvers,
// before relocations are applied (src/dispatch/impl_fn.cpp).
#pragma once
#include <stdint.h>
#include "select/plan.h"

namespace uarch {

// A threshold as a constant or a formula of the cache sizes. L2' is the
// L2, or 256 KiB where unknown. Every size derived from a cache is at
// least caches_matter_from (plan.h).
enum class Size : uint8_t {
	bytes,               // the row's constant k (0: never)
	unbounded,           // no end
	glibc_movsb,         // glibc 2.36's rep_movsb_threshold: 2112 with FSRM, else 2048 x vector bytes / 16
	nt,                  // the row's non-temporal threshold
	l3_quarter,          // a quarter of the L3 (no L3: 3 x L2'), at least L2'
	l3_half,             // half the L3, at least l3_quarter
	l2_8x,               // 8 x L2', at most l3_quarter
	l2_or_nt,            // the L2 (unknown: nt)
	l2_or_1m,            // the L2 (unknown: 1 MiB)
	l3_or_unbounded,     // the L3 (unknown: no end)
	l3_3quarters_or_nt,  // three quarters of the L3 (unknown: nt)
	l3_2x_or_never,      // twice the L3 (unknown: never)
};

struct SizeRule {
	Size of;
	uint32_t k = 0;   // Size::bytes only
};

// Where each row's numbers come from: a section of
// docs/measurements/policy-evidence.md (evidence_anchor below).
enum class Evidence : uint8_t {
	defaults, amd, zen3, zen4_avx512, zen4, zen5, alder_lake, golden_cove_server, count
};

constexpr uint64_t fbit(Feature f) { return uint64_t(1) << f; }
constexpr uint32_t vbit(Impl i) { return uint32_t(1) << uint32_t(i); }

// The condition of a row. Each field left at its default matches any CPU.
struct Match {
	Vendor vendor = Vendor::unknown;   // unknown: any
	Zen zen = Zen::none;               // none: any
	uint32_t family = 0;               // 0: any
	uint32_t model_lo = 0, model_hi = ~0u;
	uint64_t needs = 0;                // features: every one of these
	uint64_t lacks = 0;                // none of these
	uint64_t any_of = 0;               // at least one of these (0: no condition)
	uint32_t variants = 0;             // vbit() of the memcpy variant chosen (0: any)
};

struct Rule {
	Match when;
	Evidence evidence;
	SizeRule nt_min, nt_fill_min;   // nt_min first: the others may be Size::nt
	SizeRule movsb_min, movsb_max, stosb_min, stosb_max;
};

constexpr bool rule_matches(const Match &m, const Cpu &c, Impl mem)
{
	return (m.vendor == Vendor::unknown || m.vendor == c.vendor) &&
	       (m.zen == Zen::none || m.zen == c.zen) &&
	       (!m.family || (m.family == c.family && c.model >= m.model_lo && c.model <= m.model_hi)) &&
	       (c.features & m.needs) == m.needs && !(c.features & m.lacks) &&
	       (!m.any_of || (c.features & m.any_of)) &&
	       (!m.variants || (m.variants & vbit(mem)));
}

constexpr SizeRule never{Size::bytes, 0};
constexpr SizeRule kib(uint32_t n) { return {Size::bytes, n << 10}; }

// Precedence: the first row whose condition holds gives every threshold;
// the last row holds for every CPU. A rep movsb/stosb window applies only
// where the CPU has ERMS (select_plan closes it elsewhere), so a row
// needs ERMS only where its non-temporal thresholds do.
constexpr Rule x86_rules[] = {
	// Zen 5 without FSRS: glibc's rep movsb start (2112 B) up to the L2
	// size, rep stosb from 2 KiB on. Decided end to end, not on hot
	// buffers: into destinations out of the cache the vector loop cost
	// MariaDB 19-22% (glibc 2.36) from 26 KiB, and 1-8% from 8 KiB; rep
	// movsb past the L2 cost CPython's joins 4-6%.
	// docs/measurements/policy-evidence.md#zen5
	{{.vendor = Vendor::amd, .zen = Zen::zen5, .lacks = fbit(f_fsrs)}, Evidence::zen5,
	 {Size::l3_quarter}, {Size::nt},
	 {Size::glibc_movsb}, {Size::l2_or_1m}, kib(2), {Size::unbounded}},
	// Zen 4 without FSRS, the avx512 variant, ERMS: rep movsb from 8 KiB
	// and rep stosb from 2 KiB, both up to the non-temporal threshold (into
	// destinations out of the cache the vector loops lost a real program
	// 6-9%; from glibc's 2112 B, hot 2-4 KiB copies lost another 4-7%),
	// streaming from half the L3, fills of other bytes than zero from
	// twice the L3.
	// docs/measurements/policy-evidence.md#zen4-avx512
	{{.vendor = Vendor::amd, .zen = Zen::zen4, .needs = fbit(f_erms), .lacks = fbit(f_fsrs),
	  .variants = vbit(Impl::avx512)}, Evidence::zen4_avx512,
	 {Size::l3_half}, {Size::l3_2x_or_never},
	 kib(8), {Size::nt}, kib(2), {Size::nt}},
	// Zen 4 without FSRS, the avx2 variant (or avx512 without ERMS): rep
	// movsb from 8 KiB to the L2 size, rep stosb from 2 KiB, streaming from
	// a quarter of the L3, fills of other bytes than zero from twice the
	// L3. Decided end to end on both releases: with no window MariaDB ran
	// 2-4% slower (its cold 8-26 KiB copies; medians of its runs); from
	// 2112 B CPython's hot 2-8 KiB slices pay for rep movsb; past the L2
	// its 1.2 MiB joins do (0.93).
	// docs/measurements/policy-evidence.md#zen4
	{{.vendor = Vendor::amd, .zen = Zen::zen4, .lacks = fbit(f_fsrs),
	  .variants = vbit(Impl::avx2) | vbit(Impl::avx512)}, Evidence::zen4,
	 {Size::l3_quarter}, {Size::l3_2x_or_never},
	 kib(8), {Size::l2_or_nt}, kib(2), {Size::unbounded}},
	// Zen 3 without FSRS: glibc's rep movsb window, rep stosb from three
	// quarters of the L3.
	// docs/measurements/policy-evidence.md#zen3
	{{.vendor = Vendor::amd, .zen = Zen::zen3, .lacks = fbit(f_fsrs)}, Evidence::zen3,
	 {Size::l3_quarter}, {Size::nt},
	 {Size::glibc_movsb}, {Size::l2_or_nt}, {Size::l3_3quarters_or_nt}, {Size::unbounded}},
	// Alder Lake (6/0x97, 6/0x9a) without AMX: not measured, glibc's
	// windows, although it may show AVX512-FP16 (the next row's marker).
	// docs/measurements/policy-evidence.md#alder-lake
	{{.vendor = Vendor::intel, .family = 6, .model_lo = 0x97, .model_hi = 0x97, .lacks = fbit(f_amx_tile)},
	 Evidence::alder_lake,
	 {Size::l3_quarter}, {Size::nt},
	 {Size::glibc_movsb}, {Size::nt}, kib(2), {Size::unbounded}},
	// docs/measurements/policy-evidence.md#alder-lake
	{{.vendor = Vendor::intel, .family = 6, .model_lo = 0x9a, .model_hi = 0x9a, .lacks = fbit(f_amx_tile)},
	 Evidence::alder_lake,
	 {Size::l3_quarter}, {Size::nt},
	 {Size::glibc_movsb}, {Size::nt}, kib(2), {Size::unbounded}},
	// Intel server cores with AMX or AVX512-FP16 (Sapphire, Emerald and
	// Granite Rapids, whatever model number a hypervisor shows), the avx512
	// variant, ERMS: rep movsb from 24 KiB, rep stosb from 32 KiB, both to
	// the non-temporal threshold, which is 8x the L2 where that is below a
	// quarter of the L3.
	// docs/measurements/policy-evidence.md#golden-cove-server
	{{.vendor = Vendor::intel, .needs = fbit(f_erms), .any_of = fbit(f_amx_tile) | fbit(f_avx512fp16),
	  .variants = vbit(Impl::avx512)}, Evidence::golden_cove_server,
	 {Size::l2_8x}, {Size::nt},
	 kib(24), {Size::nt}, kib(32), {Size::nt}},
	// AMD: glibc's windows, but rep movsb stops at the L2 size.
	// docs/measurements/policy-evidence.md#amd
	{{.vendor = Vendor::amd}, Evidence::amd,
	 {Size::l3_quarter}, {Size::nt},
	 {Size::glibc_movsb}, {Size::l2_or_nt}, kib(2), {Size::unbounded}},
	// Every CPU: glibc's windows, streaming from a quarter of the L3.
	// docs/measurements/policy-evidence.md#defaults
	{{}, Evidence::defaults,
	 {Size::l3_quarter}, {Size::nt},
	 {Size::glibc_movsb}, {Size::nt}, kib(2), {Size::unbounded}},
};
constexpr uint32_t x86_rule_count = sizeof x86_rules / sizeof x86_rules[0];

// The row select_plan takes for this CPU and memcpy variant.
uint32_t x86_rule_index(const Cpu &c, Impl mem);

// arm64: the memcpy variant a core takes in place of the baseline copy (or
// MOPS, where the CPU has it); a core without a row keeps that.
struct ArmRule {
	Core core;
	Impl memcpy;
};

constexpr ArmRule arm_rules[] = {
	// AmpereOne (MIDR implementer 0xc0, parts 0xac3 and 0xac4): the copy
	// that prefetches 2 KiB ahead of the source (prfm pldl2keep), from the
	// kernel's AmpereOne copy, which measured large sequential copies
	// 1.3-1.4x faster with it (the README's first table).
	{Core::ampereone, Impl::ampereone},
};

// For tools and tests only (select_plan never reads it): each Evidence's
// section, indexed by Evidence. Beside the rows, not in them: a pointer in
// a row would need a relocation, and the resolvers read the rows before
// the library is relocated.
constexpr char evidence_anchor[uint32_t(Evidence::count)][64] = {
	"docs/measurements/policy-evidence.md#defaults",
	"docs/measurements/policy-evidence.md#amd",
	"docs/measurements/policy-evidence.md#zen3",
	"docs/measurements/policy-evidence.md#zen4-avx512",
	"docs/measurements/policy-evidence.md#zen4",
	"docs/measurements/policy-evidence.md#zen5",
	"docs/measurements/policy-evidence.md#alder-lake",
	"docs/measurements/policy-evidence.md#golden-cove-server",
};

} // namespace uarch
