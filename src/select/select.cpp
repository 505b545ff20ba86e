// The selection policy: a pure function from (CPU, tunables) to a Plan.
// No CPUID here, no globals: tests feed it any CPU. Every default carries
// the source of its number.
#include "select/plan.h"

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

static void x86_thresholds(const Cpu &c, Impl mem, MemThresholds *t)
{
	uint64_t vec = mem == Impl::avx512 ? 64 : mem == Impl::avx2 ? 32 : 16;
	// Zen 4 with the variants its windows and fill thresholds were measured
	// for (below).
	const bool zen4_measured = c.zen == Zen::zen4 && !c.has(f_fsrs) && (mem == Impl::avx512 || mem == Impl::avx2);

	// Non-temporal stores from a quarter of the L3 this core shares (per
	// CCX on AMD, where CPUID reports the CCX's L3), as glibc has derived
	// it since 2.38 (and Debian's 2.36 does on the Zen 5 guest below:
	// 127 MiB of a reported 508 MiB). glibc 2.36 took 3/4 of this
	// thread's share (the L3 divided by the threads sharing it), and so did
	// this policy for a while: on the Zen 5 guest that put the threshold at
	// 1.5 MiB, and uarch-bench mem's 4 MiB copies then ran 0.44-0.90x
	// glibc's in four runs (streaming stores made a copy whose buffers fit
	// the L3 go to memory). A quarter of the L3 keeps a copy from evicting
	// most of the cache and lets one that fits stay there. At least the L2:
	// a copy that fits the core's own L2 evicts nothing shared. No L3: 3x
	// the L2.
	uint64_t l2 = c.cache.l2 ? c.cache.l2 : 256u << 10;
	t->nt_min = c.cache.l3 ? uint64_t(c.cache.l3) / 4 : l2 * 3;
	if (t->nt_min < l2)
		t->nt_min = l2;
	// Every cache-derived threshold is at least caches_matter_from (plan.h).
	auto derived = [](uint64_t v) { return v < caches_matter_from ? caches_matter_from : v; };
	t->nt_min = derived(t->nt_min);

	if (c.has(f_erms)) {
		// glibc 2.36: rep_movsb_threshold = 2048 * (VEC_SIZE / 16), and
		// 2112 when FSRM makes short rep movsb fast.
		t->movsb_min = c.has(f_fsrm) ? 2112 : 2048 * (vec / 16);
		// Stop at the non-temporal threshold; on AMD at the L2 size,
		// where rep movsb falls behind vector loops (glibc 2.39 uses
		// the L2 size as rep_movsb_stop_threshold on AMD).
		t->movsb_max = t->nt_min;
		if (c.vendor == Vendor::amd && c.cache.l2)
			t->movsb_max = derived(c.cache.l2);
		// Measured with uarch-bench mem on Zen 3 (EPYC 7xx3, virtualised,
		// no FSRS): on the same CPU glibc 2.36 (rep movsb from 2112)
		// and the avx2 loop were within noise of each other from 4 KiB
		// to 4 MiB, so the window stays glibc's.
		//
		// glibc 2.36 rep_stosb_threshold = 2048. rep stosb has no
		// direction or aliasing trouble, so it runs to any size.
		t->stosb_min = 2048;
		t->stosb_max = ~uint64_t(0);
		// Zen 3 (no FSRS): measured with uarch-bench mem, the avx2 store
		// loop fills 2-4 KiB in about half the time of rep stosb (3000 B:
		// 47 ns against 88 ns) and is level with it or ahead up to 16 MiB;
		// past the L3 rep stosb wins (64 MiB: the loop takes 1.6-1.8x as
		// long, it pays a read for ownership per line). So rep stosb only
		// from 3/4 of the whole L3.
		if (c.zen == Zen::zen3 && !c.has(f_fsrs))
			t->stosb_min = derived(c.cache.l3 ? uint64_t(c.cache.l3) / 4 * 3 : t->nt_min);
		// Zen 5 (family 0x1a model 2; EPYC "Turin-like" KVM guests,
		// AVX-512, ERMS, FSRM, no FSRS, L1d 48 KiB, L2 1 MiB, 32 MiB L3 per
		// CCX). uarch-tune, ns per call of the avx512 variant, loop / rep
		// (aligned; dst+1 alike):
		//   copy 4 KiB 23.9/38.5, 16 KiB 87/132, 24 KiB 139/198,
		//        32 KiB 441/261, 256 KiB 3365/2617, 1 MiB 25915/21541;
		//   fill 4 KiB 22.0/37.5, 512 KiB 2926/4105, 1 MiB 12564/11181.
		// The copy loop falls off where source and destination outgrow
		// the L1d. Between the sizes the tuner tries (medians of three
		// runs, in two states of one guest minutes apart, its speed moved
		// by 1.5x): 24 KiB 103/161 and 240/223, 26 KiB 194/173 and
		// 334/242, 28 KiB 343/186, 32 KiB 414/216. So rep movsb from
		// 26 KiB, where it won in both, and where AOCL-LibMem starts it on
		// Zen 5 (half the L1d plus 2 KiB).
		// Its end: rep movsb beats the loop by 1.2-1.5x from 1 to 32 MiB
		// and NT copies by 1.1-1.3x at 8-128 MiB (three uarch-tune runs
		// timing both against NT); uarch-bench mem, two full runs each
		// way against streaming from 8 MiB: memcpy 16 MiB to dst+1
		// 1.32-1.37x glibc against 1.18-1.19x, the python-buffers replay
		// (16-64 MiB copies) 1.08-1.14x against 0.83-0.91x, but 64 MiB
		// aligned 1.20-1.28x against 1.35-1.38x. Nor does it evict more:
		// an 8 MiB buffer read back after a 16 MiB copy took 118-124 us
		// after rep movsb, 140-159 us after NT (whose loads still fill
		// the cache), 223-274 us after the loop, 94-107 us with no copy
		// (64 MiB: 137-247, 186-269, 191-269 us). So to the L3 size (past
		// it a copy evicts the L3 whichever way, and streaming won), as
		// AOCL-LibMem does on Zen 5.
		// rep stosb loses up to the L2 size (0.6-0.75x) and wins past it
		// (1.1x): from the L2 size on, to any size (a streaming fill from
		// 1.5 MiB, uarch-bench mem against glibc's rep stosb: 16 MiB
		// 1.05-1.27x, but 4 MiB 0.69-0.91x and 64 MiB 0.72x; against rep
		// stosb in uarch-tune NT fills took 1.2-2.5x its time to 32 MiB:
		// this CPU's rep stosb already avoids the reads for ownership).
		if (c.zen == Zen::zen5 && !c.has(f_fsrs)) {
			t->movsb_min = 26u << 10;
			t->movsb_max = c.cache.l3 ? derived(c.cache.l3) : ~uint64_t(0);
			t->stosb_min = derived(c.cache.l2 ? c.cache.l2 : 1u << 20);
		}
		// Zen 4 (family 0x19 model 0x11; EPYC "Genoa" KVM guest, 2 vCPU,
		// AVX-512, ERMS, FSRM, no FSRS, L1d 32 KiB, L2 1 MiB, 32 MiB CCX
		// L3), uarch-tune, ns per call of the avx512 variant, loop / rep,
		// dst aligned (dst+1 alike):
		//   copy 1 KiB 9.7/16.0, 2 KiB 18.7/25.0, 4 KiB 36.5/42.8,
		//        16 KiB 146/158, 64 KiB 1142/1136, 1 MiB 22083/21798,
		//        4 MiB 87881/86809 (dst+1: 89002/95002);
		//   fill 1 KiB 9.2/16.0, 2 KiB 18.1/20.8, 4 KiB 36.0/37.6,
		//        64 KiB 587/582, 1 MiB 11412/11282, 16 MiB 196993/199727.
		// rep movsb loses up to 0.61x below 24 KiB and never wins by more
		// than 1% above (to a misaligned dst it loses 5-13% from 24 KiB):
		// never. rep stosb loses up to 0.58x below 32 KiB and wins by at most
		// 2% above: never by this measure (but see the replay below); from
		// the non-temporal threshold streaming fills beat it (uarch-bench
		// mem, memset 16 MiB: 1.20-1.75x glibc's rep stosb). Non-temporal
		// against the cached loop, the same buffers again and again: copy 8
		// MiB 0.94x, 16 MiB 1.12x, 32 MiB 1.43x; fill 4 MiB 1.13x, 8 MiB
		// 1.28x: the copy's crossover decides, half the L3 (16 MiB).
		// The Zen 4 guest of 2026-12-02 (the same family and model, AVX-512
		// hidden by the hypervisor, so the avx2 variant; L1d 32 KiB, L2
		// 1 MiB, 32 MiB L3), three uarch-tune runs, loop / rep:
		//   copy 512 B 6.8/16.2, 2 KiB 24.0/31.7, 4 KiB 46.9/54.7,
		//        16 KiB 189/205, 24-64 KiB within 3%, 1 MiB 28572/28282
		//        (dst+1: rep loses 3-22% from 20 KiB to 32 MiB);
		//   fill 512 B 8.7/23.4, 2 KiB 27.4/41.7, 4 KiB 54.3/67.4,
		//        16 KiB-16 MiB within 3% (one 20 KiB sample 1.13).
		// The same verdict: neither, with either vector width. Its
		// streaming crossover is earlier than the AVX-512 guest's: copy
		// 4 MiB 0.92-1.04x, 8 MiB 1.06-1.14x, 16 MiB 1.13-1.17x; fill
		// 8 MiB 0.98-1.20x, 16 MiB 1.08-1.17x: a quarter of the L3 (8 MiB),
		// the general rule, stays for avx2.
		// "Never" closes a window's start only: its stop stays for a
		// tunable that opens it (the plan closes the rest, below).
		// Every fill figure above, and the tuner's, was a fill of zeros
		// (one call a sample, the byte its index). Streaming other bytes
		// is another matter on the AVX-512 guest (2026-12-04; the same
		// family and model): us per call, medians of 9 interleaved rounds
		// of 3 calls, the same buffer again and again, avx512 variant,
		// streaming / cached loop / glibc's rep stosb:
		//   byte 0:    16 MiB 197/190/223 us, 32 MiB 399/753/533,
		//              64 MiB 783/1896/1006, 128 MiB 1566/4455/1872;
		//   byte 0x5a: 16 MiB 615/200/255 us, 32 MiB 1213/747/1125,
		//              64 MiB 2421/2070/2371, 128 MiB 4864/4727/4906.
		// Streaming zeros moves 80+ GB/s, any other byte 27 GB/s, whatever
		// the buffer held before (64 MiB: 0 over 0x5a 804 us, 0x5a over 0
		// 2358). So zero fills stream from the copies' threshold, fills of
		// any other byte from twice the L3: below it the cached loop wins
		// (16 MiB 3.1x, 32 MiB 1.6x); at 64 MiB, in uarch-bench mem (each
		// fill among other rows, not into a buffer just filled), streaming
		// ran 0.97-1.10x glibc's rep stosb in eight runs (median 1.01) and
		// the cached loop 0.84-0.995x in six (median 0.93). The rule is the
		// memory system's, so it holds for the avx2 variant and without
		// ERMS too (not measured apart); it is set below, outside the ERMS
		// block.
		// One window opened since, by a replay rather than by the tuner,
		// which times each size alone: the avx512 variant's fills take rep
		// stosb from 64 KiB to 512 KiB. gzip's memset profile
		// (tests/data/profiles) is 98% fills of 1-64 bytes and 2% of 64-128
		// KiB, which hold most of its time; uarch-bench mem --profile, three
		// runs a setting, interleaved (the Zen 4 guest of 2026-12-04,
		// AVX-512): no window 0.988-0.992x glibc, rep stosb from 64 KiB
		// 1.010x each time, from 32 KiB or 16 KiB 1.009-1.012x. The big fills
		// alone were level either way (1.000-1.012x), the small ones alone
		// 1.02-1.03x: what rep stosb saves is in the calls that follow a big
		// fill. From 64 KiB, not lower: git-gc's fills (54% 32-64 KiB) ran
		// 1.011-1.020x without a window and 0.995-1.003x with one from 32 KiB
		// (level with glibc, which runs rep stosb there), 1.015-1.016x from
		// 64 KiB. Fixed fills of 64 KiB-4 MiB, aligned and to dst+1, moved
		// from 0.993-1.011x to 0.994-1.004x (two runs each); those of 1-4 MiB
		// were the loop's (1.001-1.011x without the window), as was zstd's
		// memset replay, whose time is in fills of 512 KiB-1 MiB: six
		// interleaved runs each, median 1.005x (0.993-1.015) with the window
		// ending at 512 KiB, 0.998x (0.982-1.005) with it ending at 16 MiB.
		// So it ends at 512 KiB: no more than the noise decides there. The
		// avx2 variant keeps no window (not measured so).
		if (zen4_measured) {
			if (mem == Impl::avx512 && uint64_t(c.cache.l3) / 2 > t->nt_min)
				t->nt_min = uint64_t(c.cache.l3) / 2;   // above nt_min: derived already
			t->movsb_min = 0;
			t->movsb_max = t->nt_min;
			t->stosb_min = mem == Impl::avx512 ? 64u << 10 : 0;
			t->stosb_max = mem == Impl::avx512 ? 512u << 10 : ~uint64_t(0);
		}
		// Intel server cores with AMX (Sapphire Rapids, Emerald Rapids,
		// Granite Rapids): the AMX-TILE bit marks them whatever model
		// number a hypervisor shows (the guest measured reports 6/0xa7,
		// a client model). Where a hypervisor hides AMX, AVX512-FP16
		// marks them (an Emerald Rapids guest, 6/0xcf: see below), but for
		// Alder Lake (6/0x97, 6/0x9a), whose Golden Cove cores show it
		// with AVX-512 enabled, beside a 1.25 MiB L2 and a client uncore:
		// not measured, they keep glibc's windows. Not the L2 size: the
		// windows below caches_matter_from are decided before the caches
		// are read. Measured with uarch-tune on a 2-vCPU KVM guest
		// of such a core (AVX-512, ERMS, FSRM, FSRS; L1d 48 KiB, L2 2 MiB,
		// a reported 480 MiB L3), ns per call of the avx512 variant,
		// loop / rep, dst aligned (dst+1 alike):
		//   copy 2 KiB 10.2/17.5, 4 KiB 19.0/22.0, 8 KiB 36.8/38.1,
		//        16 KiB 72.3/73.6, 24 KiB 158/123, 64 KiB 1565/1434,
		//        1 MiB 38474/34644, 2 MiB 151647/153030;
		//   fill 1 KiB 5.5/16.2, 2 KiB 8.7/15.7, 4 KiB 16.9/19.7,
		//        16 KiB 66.1/67.7, 256 KiB 4546/4420, 1 MiB 17407/18064.
		// rep movsb loses below 24 KiB (where source and destination
		// together outgrow the L1d, the loop falls off) and wins by about
		// 10% from there to the L2 size, level above: the window runs from
		// 24 KiB to the non-temporal threshold. rep stosb never wins by
		// more than 3% at any size and loses up to 3x below 4 KiB (FSRS
		// notwithstanding): never; fills take the store loop, then
		// streaming stores. Non-temporal against the cached loop, the
		// same buffers copied again and again, two full runs: copy 4 MiB
		// 0.77/0.91x, 8 MiB 1.09/0.90x, 16 MiB 1.35/1.18x, 64 MiB
		// 1.73/1.64x; fill 4 MiB 0.54/0.48x, 8 MiB 1.03/0.66x, 16 MiB
		// 1.18/0.96x, 32 MiB 1.51/1.46x: the crossover moves between 8 and
		// 16 MiB from run to run, so from 8x the L2 (16 MiB), where that is
		// below a quarter of the L3. That figure is this guest's: its L3
		// is shared with other tenants and its reported size is not the
		// host's, so on bare metal the crossover may lie higher (not
		// measured); uarch-tune finds it there.
		// The Emerald Rapids guest (2 vCPU; AMX hidden, AVX512-FP16 shown;
		// L1d 48 KiB, L2 2 MiB, a reported 260 MiB L3), two uarch-tune runs:
		//   copy 1 KiB 6.1/17.8 and 9.4/24.6, 4 KiB 28.9/42.1 and
		//        30.4/42.9, 16 KiB 98/94 and 127/128, 24 KiB 173/147 and
		//        731/378, 64 KiB-16 MiB within 6% but 1 MiB (1.08-1.19x);
		//   fill 1 KiB 5.8/17.2 and 6.6/20.9, 4 KiB 22.2/25.5 and
		//        26.5/40.5, 64 KiB-1 MiB within 2%, 2 MiB 58034/53733 and
		//        92240/73066, 4 MiB 1.11/1.18x, 16 MiB 1.23/1.31x.
		// The same copy windows. Fills differ from the guest above: rep
		// stosb wins by 8-31% from the L2 size on, where that guest saw
		// it level; so from the L2 size to the non-temporal threshold
		// (uarch-bench mem, memset 4 MiB aligned, two runs each, against
		// glibc's rep stosb: 1.05-1.06x with the window, 0.95-0.96x
		// without). Non-temporal against the cached loop: copy 2 MiB
		// 1.50/0.59x, 4 MiB 1.62/2.10x; fill 4 MiB 1.12/1.30x: earlier
		// than on the guest above, the threshold stays (a buffer reused
		// while it fits the cache loses more by streaming than a cold one
		// gains). With these windows, uarch-bench mem geomeans against
		// glibc, memcpy/memmove/memset, went from 1.27/1.22/0.96 (glibc's
		// windows) to 1.31/1.28/1.04 (memset 64 MiB: 0.95x to 2.58x).
		// A 16-vCPU Emerald Rapids guest (6/0xcf, L1d 48 KiB, L2 2 MiB,
		// a reported 300 MiB L3; other tenants on the host) moved rep
		// stosb's start down to 32 KiB. Two uarch-tune runs on two
		// instances, loop / rep, dst aligned and dst+1: 32 KiB 0.98/1.04
		// and 1.43/1.48, 48 KiB 1.36/1.59 and 1.19/1.19, 64 KiB 1.02/1.01
		// both, 128 KiB-1 MiB 1.00-1.03 and 0.90-0.93; 24-28 KiB
		// 0.97-1.05 and 1.01-1.21. In uarch-bench mem, five runs, the loop
		// filled 64 KiB-1 MiB at 0.92-1.03x glibc's rep stosb (most rows
		// 0.97-0.98), rep stosb from 48 KiB (a tuned profile) at 1.00x,
		// and the git-gc memset replay (54% of its fills 32-64 KiB) ran
		// 0.79-0.80x in three runs of six, 0.96-0.99x in the others,
		// 0.99x with rep stosb from 26 KiB. So fills take rep stosb
		// from 32 KiB, where it never lost more than 2% in a benchmark,
		// on Sapphire Rapids too (level there from 16 KiB to 1 MiB,
		// above). The start is fixed, not cache-derived: it lies below
		// caches_matter_from.
		bool alder_lake = c.family == 6 && (c.model == 0x97 || c.model == 0x9a);
		bool golden_cove_server = c.has(f_amx_tile) || (c.has(f_avx512fp16) && !alder_lake);
		if (c.vendor == Vendor::intel && golden_cove_server && mem == Impl::avx512) {
			if (derived(8 * l2) < t->nt_min)
				t->nt_min = derived(8 * l2);
			t->movsb_min = 24u << 10;
			t->movsb_max = t->nt_min;
			t->stosb_min = 32u << 10;
			t->stosb_max = t->nt_min;
		}
	}
	// Every line, on every vendor. uarch-bench sync on Zen 3 (random
	// 256-byte records, 512 MiB table, next batch prefetched): every line
	// 3.0x faster than no prefetch, every 2nd line 2.1x, every 4th 1.6x;
	// the adjacent-line prefetchers do not fill the skipped lines in time.
	// Intel's L2 spatial prefetcher pairs lines likewise (not measured
	// here). A surplus prefetch costs an instruction, a missing one a DRAM
	// round trip.
	uint32_t line = c.cache.line ? c.cache.line : 64;
	t->prefetch_stride = line;
	// Fills of other bytes than zero stream as zero fills do, but where
	// they were measured apart: Zen 4 (above), from twice the L3 (never
	// where the L3 is unknown); elsewhere not measured.
	t->nt_fill_min = t->nt_min;
	if (zen4_measured)
		t->nt_fill_min = c.cache.l3 ? derived(2 * uint64_t(c.cache.l3)) : 0;
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
	// in wake-up latency (uarch-bench idle on Zen 3 under KVM: FUTEX_WAKE
	// to the sleeper's return, p50 12-16 us for 10-50 us waits), so a
	// wait that ends within that time never sleeps, and a longer one
	// wastes at most that much CPU (the 2-competitive spin-then-block
	// rule): 15 us. That is 0.3% of a CPU in a 5 ms wait.
	p->spin_ns = 15000;
	// The monitor stage: the waiter stops issuing instructions but wakes
	// on the store within the cache-line transfer (UMWAIT C0.1, MWAITX in
	// C0: no C-state exit; seed 004 measured MWAIT's exit below HLT's on
	// Zen 3), so it takes over early from the spin (2 us) and lasts about
	// ten futex round trips (100 us): 2% of a CPU in a 5 ms wait.
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
	p->impl[op_memcpy] = c.core == Core::ampereone ? Impl::ampereone : mem;
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

void select_plan(const Cpu &cpu_in, const Tunables &t, Plan *p)
{
	zero(p, sizeof *p);
	Cpu c = cpu_in;
	c.features &= ~t.mask();   // tunables may only take features away

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
	// this process ends lasts the whole spin budget (examples/ring on one
	// CPU: 0.32x the messages/s of futex alone). Sleep at once instead.
	if (c.cpus_allowed == 1) {
		p->idle.nstages = 1;
		p->idle.stages[0] = Stage::futex;
	}

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

} // namespace uarch
