// The selection policy: a pure function from (CPU, tunables) to a Plan.
// No CPUID here, no globals: tests feed it any CPU. Every default carries
// the source of its number.
#include "select/plan.h"
#include "select/rules.h"

namespace uarch {

static const char stage_names[uint32_t(Stage::count)][8] = {
	"spin", "umwait", "tpause", "mwaitx", "wfe", "wfet", "futex",
};
static const char refuse_texts[5][40] = {
	"", "unknown variant", "variant does not implement this op",
	"this CPU cannot run it", "unknown or unavailable idle stage",
};

const char *stage_name(Stage s) { return uint32_t(s) < uint32_t(Stage::count) ? stage_names[uint32_t(s)] : "?"; }
const char *refuse_reason_text(uint8_t r) { return refuse_texts[r < 5 ? r : 0]; }

bool stage_from_name(const char *s, size_t len, Stage *out)
{
	for (uint32_t i = 0; i < uint32_t(Stage::count); i++)
		if (name_equal(s, len, stage_names[i])) {
			*out = Stage(i);
			return true;
		}
	return false;
}

bool stage_runs_on(Stage s, const Cpu &c)
{
	switch (s) {
	case Stage::spin: case Stage::futex: return true;
	case Stage::umwait: case Stage::tpause: return c.arch == Arch::x86_64 && c.has(f_waitpkg);
	case Stage::mwaitx: return c.arch == Arch::x86_64 && c.has(f_monitorx);
	case Stage::wfe: return c.arch == Arch::aarch64;
	case Stage::wfet: return c.arch == Arch::aarch64 && c.has(f_wfxt);
	default: return false;
	}
}

// ---- x86-64 defaults --------------------------------------------------------

// Core 2 and older Intel, K8 and older AMD: unaligned 16-byte loads split
// and are slow (glibc clears Fast_Unaligned_Load for them and sets it from
// Nehalem and AMD family 10h on), so general registers move data there.
static bool slow_unaligned_sse(const Cpu &c)
{
	if (c.vendor == Vendor::intel)
		return c.family == 6 && c.model < 0x1a;
	if (c.vendor == Vendor::amd)
		return c.family < 0x10;
	return false;
}

// Skylake-SP/X (family 6 model 0x55) lowers its clock for zmm work; glibc
// sets Prefer_No_AVX512 there and so does this policy. Later Intel server
// and client cores (Ice Lake on) and Zen 4/5 run it without that penalty.
static bool avx512_downclocks(const Cpu &c)
{
	return c.vendor == Vendor::intel && c.family == 6 && c.model == 0x55;
}

static Impl x86_mem_impl(const Cpu &c)
{
	if (impl_runs_on(op_memcpy, Impl::avx512, c) && !avx512_downclocks(c))
		return Impl::avx512;
	if (impl_runs_on(op_memcpy, Impl::avx2, c))
		return Impl::avx2;
	if (slow_unaligned_sse(c))
		return Impl::gpr;
	return Impl::baseline;
}

static constexpr bool matches_any_cpu(const Match &m)
{
	return m.vendor == Vendor::unknown && m.zen == Zen::none && !m.family && !m.needs && !m.lacks &&
	       !m.any_of && !m.variants;
}
static_assert(matches_any_cpu(x86_rules[x86_rule_count - 1].when), "the last rule must hold for every CPU");

uint32_t x86_rule_index(const Cpu &c, Impl mem)
{
	uint32_t i = 0;
	while (i < x86_rule_count - 1 && !rule_matches(x86_rules[i].when, c, mem))
		i++;
	return i;
}

// Every cache-derived threshold is at least caches_matter_from (plan.h).
static uint64_t derived(uint64_t v) { return v < caches_matter_from ? caches_matter_from : v; }

static uint64_t size_of(SizeRule s, const Cpu &c, Impl mem, uint64_t nt)
{
	uint64_t l2 = c.cache.l2, l3 = c.cache.l3;
	uint64_t l2_or_256k = l2 ? l2 : 256u << 10;
	// A quarter of the L3 this core shares (per CCX on AMD, where CPUID
	// reports the CCX's L3), as glibc derives it since 2.38; at least
	// the L2, which a copy fills without evicting anything shared; 3x the
	// L2 without an L3 (docs/measurements/policy-evidence.md#defaults).
	uint64_t quarter = l3 ? l3 / 4 : l2_or_256k * 3;
	quarter = derived(quarter < l2_or_256k ? l2_or_256k : quarter);
	switch (s.of) {
	case Size::bytes: return s.k;
	case Size::unbounded: return ~uint64_t(0);
	case Size::glibc_movsb: {
		uint64_t vec = mem == Impl::avx512 ? 64 : mem == Impl::avx2 ? 32 : 16;
		return c.has(f_fsrm) ? 2112 : 2048 * (vec / 16);
	}
	case Size::nt: return nt;
	case Size::l3_quarter: return quarter;
	case Size::l3_half: return l3 / 2 > quarter ? l3 / 2 : quarter;
	case Size::l2_8x: return derived(8 * l2_or_256k) < quarter ? derived(8 * l2_or_256k) : quarter;
	case Size::l2_or_nt: return l2 ? derived(l2) : nt;
	case Size::l2_or_1m: return derived(l2 ? l2 : 1u << 20);
	case Size::l3_or_unbounded: return l3 ? derived(l3) : ~uint64_t(0);
	case Size::l3_3quarters_or_nt: return derived(l3 ? l3 / 4 * 3 : nt);
	case Size::l3_2x_or_never: return l3 ? derived(2 * l3) : 0;
	}
	return 0;
}

// The windows and thresholds of the first rule that holds (rules.h).
static void x86_thresholds(const Cpu &c, Impl mem, MemThresholds *t)
{
	const Rule &r = x86_rules[x86_rule_index(c, mem)];
	uint64_t nt = size_of(r.nt_min, c, mem, 0);
	t->nt_min = nt;
	t->nt_fill_min = size_of(r.nt_fill_min, c, mem, nt);
	t->movsb_min = size_of(r.movsb_min, c, mem, nt);
	t->movsb_max = size_of(r.movsb_max, c, mem, nt);
	t->stosb_min = size_of(r.stosb_min, c, mem, nt);
	t->stosb_max = size_of(r.stosb_max, c, mem, nt);
	// Every line, on every vendor: the adjacent-line prefetchers do not
	// fill skipped lines in time, and a surplus prefetch costs an
	// instruction where a missing one costs a DRAM round trip
	// (docs/measurements/policy-evidence.md#prefetch-stride).
	t->prefetch_stride = c.cache.line ? c.cache.line : 64;
}

static void x86_idle(const Cpu &c, IdlePolicy *p)
{
	// Spin, then the CPU's user-level monitor/wait (WAITPKG's UMWAIT on
	// Intel, MONITORX/MWAITX on AMD and Hygon), then sleep in the kernel.
	Stage monitor = c.has(f_waitpkg) ? Stage::umwait : c.has(f_monitorx) ? Stage::mwaitx : Stage::spin;
	p->nstages = 0;
	p->stages[p->nstages++] = Stage::spin;
	if (monitor != Stage::spin)
		p->stages[p->nstages++] = monitor;
	p->stages[p->nstages++] = Stage::futex;

	// Without a monitor stage: spin about as long as a futex sleep costs
	// in wake-up latency, so a wait that ends within that time never
	// sleeps, and a longer one wastes at most that much CPU (the
	// 2-competitive spin-then-block rule): 15 us
	// (docs/measurements/policy-evidence.md#idle-spin).
	p->spin_ns = 15000;
	// The monitor stage: the waiter stops issuing instructions but wakes
	// on the store within the cache-line transfer (UMWAIT C0.1, MWAITX in
	// C0: no C-state exit), so it takes over early from the spin (2 us)
	// and lasts about ten futex round trips (100 us)
	// (docs/measurements/policy-evidence.md#idle-monitor).
	p->monitor_ns = 100000;
	if (monitor != Stage::spin)
		p->spin_ns = 2000;
	// C0.1: the faster wake (Intel SDM, UMWAIT: C0.2 trades wake-up time
	// for power, and the OS may forbid it anyway).
	p->umwait_c01 = 1;
}

// ---- arm64 defaults ---------------------------------------------------------

static void arm_plan(const Cpu &c, Plan *p)
{
	Impl mem = c.has(f_mops) ? Impl::mops : Impl::baseline;
	p->impl[op_memcpy] = mem;
	for (const ArmRule &r : arm_rules)
		if (r.core == c.core)
			p->impl[op_memcpy] = r.memcpy;
	p->impl[op_memmove] = mem;
	p->impl[op_memset] = mem;
	p->impl[op_smp_mb] = Impl::dmb;
	p->impl[op_prefetch_range] = Impl::prfm;
	p->impl[op_prefetchw] = Impl::prfm;
	uint32_t line = c.cache.line ? c.cache.line : 64;
	p->mem.prefetch_stride = line;
	// Seed 002: prfm pldl2keep 2048 and 2112 bytes ahead of the source,
	// for copies of at least a 4 KiB page.
	p->mem.prefetch_distance = 2048;
	p->mem.prefetch_copy_min = 4096;
	p->idle.nstages = 0;
	p->idle.stages[p->idle.nstages++] = Stage::spin;
	// WFET ends on its deadline by itself. WFE needs the kernel's event
	// stream (HWCAP_EVTSTRM) to wake in time when nobody stores to the word;
	// without it a timed wait could overrun by a timer tick, so the spin
	// hands straight to the futex there (as under qemu-user).
	const uint64_t hwcap_evtstrm = 1u << 2;
	if (c.has(f_wfxt))
		p->idle.stages[p->idle.nstages++] = Stage::wfet;
	else if (c.hwcap & hwcap_evtstrm)
		p->idle.stages[p->idle.nstages++] = Stage::wfe;
	p->idle.stages[p->idle.nstages++] = Stage::futex;
}

// ---- tunables ---------------------------------------------------------------

static void apply_idle_stages(const Tunables &t, const Entry &e, const Cpu &c, Plan *p, uint32_t idx)
{
	IdlePolicy ip = p->idle;
	ip.nstages = 0;
	const char *v = t.input + e.value_offset;
	size_t i = 0, n = e.value_length;
	bool ok = true;
	while (ok && i < n) {
		size_t j = i;
		while (j < n && v[j] != ',')
			j++;
		Stage s;
		ok = stage_from_name(v + i, j - i, &s) && stage_runs_on(s, c) && ip.nstages < 4;
		if (ok)
			ip.stages[ip.nstages++] = s;
		i = j + 1;
	}
	// The futex stage must end the list when the wait can be long: without
	// it a spin or a monitor wait would burn the CPU forever. A list
	// without futex is allowed only as "spin" alone (a pure spin).
	if (ok && ip.nstages && ip.stages[ip.nstages - 1] != Stage::futex &&
	    !(ip.nstages == 1 && ip.stages[0] == Stage::spin))
		ok = false;
	if (ok && ip.nstages) {
		p->idle = ip;
	} else {
		p->refused |= 1u << idx;
		p->refused_reason[idx] = refuse_bad_stage;
	}
}

void plan_defaults(const Cpu &c, Plan *p)
{
	zero(p, sizeof *p);
	p->idle.spin_ns = 20000;
	p->idle.monitor_ns = 200000;
	p->idle.umwait_c01 = 1;
	for (uint32_t i = 0; i < op_count; i++)
		p->impl[i] = Impl::generic;
	p->impl[op_idle_wait] = Impl::policy;
	p->impl[op_prefetchw] = Impl::none;

	if (c.arch == Arch::x86_64) {
		Impl mem = x86_mem_impl(c);
		p->impl[op_memcpy] = p->impl[op_memmove] = p->impl[op_memset] = mem;
		p->impl[op_smp_mb] = Impl::lock_add;
		p->impl[op_prefetch_range] = Impl::prefetcht0;
		p->impl[op_prefetchw] = c.has(f_prefetchw) ? Impl::prefetchw : Impl::prefetcht0;
		x86_thresholds(c, mem, &p->mem);
		x86_idle(c, &p->idle);
	} else if (c.arch == Arch::aarch64) {
		arm_plan(c, p);
	} else {
		p->mem.prefetch_stride = 64;
		p->idle.nstages = 2;
		p->idle.stages[0] = Stage::spin;
		p->idle.stages[1] = Stage::futex;
	}

	// One CPU for the whole process: a spinning or monitoring waiter holds
	// the only CPU its waker could run on, so every wait that a thread of
	// this process ends lasts the whole spin budget. Sleep at once instead
	// (docs/measurements/policy-evidence.md#idle-one-cpu).
	if (c.cpus_allowed == 1) {
		p->idle.nstages = 1;
		p->idle.stages[0] = Stage::futex;
	}
}

void apply_tunables(const Tunables &t, const Cpu &c, Plan *p)
{
	Cpu any = c;   // the same architecture with every feature
	any.features = ~uint64_t(0);
	for (uint32_t i = 0; i < t.nentries && i < Tunables::max_entries; i++) {
		const Entry &e = t.entries[i];
		if (e.verdict != Verdict::applied)
			continue;
		Op op;
		if (key_op(e.key, &op)) {
			Impl impl;
			uint8_t why = refuse_none;
			if (!impl_from_name(t.input + e.value_offset, e.value_length, &impl))
				why = refuse_unknown_variant;
			else if (!impl_runs_on(op, impl, any))
				why = refuse_not_for_op;
			else if (!impl_runs_on(op, impl, c))
				why = refuse_cpu_lacks;
			if (why) {
				p->refused |= 1u << i;
				p->refused_reason[i] = why;
			} else {
				p->impl[op] = impl;
			}
			continue;
		}
		switch (e.key) {
		case Key::rep_movsb_threshold: p->mem.movsb_min = e.number; break;
		case Key::rep_movsb_stop: p->mem.movsb_max = e.number; break;
		case Key::rep_stosb_threshold: p->mem.stosb_min = e.number; break;
		case Key::rep_stosb_stop: p->mem.stosb_max = e.number; break;
		case Key::nt_threshold:
			// Fills of other bytes follow, unless the policy set them apart.
			if (p->mem.nt_fill_min == p->mem.nt_min && !t.find(Key::nt_fill_threshold))
				p->mem.nt_fill_min = e.number;
			p->mem.nt_min = e.number;
			break;
		case Key::nt_fill_threshold: p->mem.nt_fill_min = e.number; break;
		case Key::prefetch_stride:
			// A stride must be a power of two between 16 and 4096.
			if (e.number >= 16 && e.number <= 4096 && !(e.number & (e.number - 1)))
				p->mem.prefetch_stride = uint32_t(e.number);
			else {
				p->refused |= 1u << i;
				p->refused_reason[i] = refuse_cpu_lacks;
			}
			break;
		case Key::idle_spin_ns: p->idle.spin_ns = e.number > 100000000 ? 100000000 : uint32_t(e.number); break;
		case Key::idle_monitor_ns: p->idle.monitor_ns = e.number > 100000000 ? 100000000 : uint32_t(e.number); break;
		case Key::idle_c01: p->idle.umwait_c01 = uint8_t(e.number); break;
		case Key::idle_stages: apply_idle_stages(t, e, c, p, i); break;
		default: break;
		}
	}
	// rep movsb/stosb need ERMS, whatever a tunable said.
	if (c.arch == Arch::x86_64 && !c.has(f_erms)) {
		p->mem.movsb_min = p->mem.movsb_max = 0;
		p->mem.stosb_min = p->mem.stosb_max = 0;
	}
	// A threshold of 0 means never (as uarch-tune writes it and uarch-info
	// shows it): close the window, since the variants test only
	// min <= n < max, and a window [0, stop) would run rep movsb/stosb
	// for every large size instead.
	if (!p->mem.movsb_min)
		p->mem.movsb_max = 0;
	if (!p->mem.stosb_min)
		p->mem.stosb_max = 0;
}

void select_plan(const Cpu &cpu_in, const Tunables &t, Plan *p)
{
	Cpu c = cpu_in;
	c.features &= ~t.mask();   // tunables may only take features away
	plan_defaults(c, p);
	apply_tunables(t, c, p);
}

} // namespace uarch
