// uarch-tune's decision: measured timings in, thresholds out. A pure
// function of its input (no clock, no CPU access), so tests feed it
// synthetic timings.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <string>
#include <vector>
#include "tunables/tunables.h"

namespace uarch::tune {

// One candidate at one size: the median time of all samples, and the
// noise seen there: (max - min) / median of the medians of repeated blocks
// of samples (0 when only one block ran).
struct Timing {
	double ns = 0;
	double spread = 0;
};

enum Align { aligned, misaligned, align_count };

// A `rep` instruction against the vector loop at one size, for both
// destination alignments.
struct RepRow {
	uint64_t size = 0;
	Timing loop[align_count], rep[align_count];
};

// Non-temporal against ordinary stores for one (large) size: temporal is
// the faster cached candidate measured there (rep_base: rep movsb/stosb
// rather than the vector loop).
struct NtRow {
	uint64_t size = 0;
	Timing temporal, nt;
	bool rep_base = false;
};

struct StrideRow {
	uint32_t stride = 0;
	Timing t;    // time of the whole prefetching walk
};

struct Evidence {
	std::vector<RepRow> movsb;    // ascending sizes
	std::vector<RepRow> stosb;    // ascending sizes
	std::vector<NtRow> nt;        // copies, ascending sizes: decide the threshold
	std::vector<NtRow> nt_set;    // fills of a byte other than 0, ascending sizes: their own
	                              // threshold, and where rep stosb gives way to them
	std::vector<StrideRow> stride;
	Timing futex_wake;            // FUTEX_WAKE to the sleeper running again
	bool want_spin = false;       // the plan has no monitor stage: the spin budget applies
};

struct Window {
	uint64_t min = 0, max = 0;    // [min, max); min == 0: never; max == open: to any size
	static constexpr uint64_t open = Tunables::max_number;   // the tunables' "inf"
};

struct Profile {
	Window movsb, stosb;
	bool movsb_kept = false, stosb_kept = false;   // the policy's window, not contradicted (Rules)
	// Where the tuner's own window ran on to the policy's end: where its
	// wins ended (else 0).
	uint64_t movsb_wins_end = 0, stosb_wins_end = 0;
	bool have_nt = false;         // false: no size tried favoured NT stores: keep the default
	uint64_t nt_min = 0;
	bool have_nt_fill = false;    // as have_nt, for fills of other bytes than 0
	uint64_t nt_fill_min = 0;
	uint32_t prefetch_stride = 0; // 0: no evidence
	uint32_t spin_ns = 0;         // 0: not decided (a monitor stage follows the spin)
	double noise = 0;             // the median spread over every timing
	double noise_max = 0;
	bool too_noisy = false;
};

struct Rules {
	// A candidate wins only when it is at least this much faster: a tie
	// keeps the simpler path (vector loop, ordinary stores, fewer prefetches).
	double margin = 0.03;
	// Refuse to decide when the median spread of repeated medians is above this.
	double noise_limit = 0.10;
	// The non-temporal threshold is never below this (0: no floor; the
	// tuner passes the policy's own). The tuner copies the same buffers
	// again and again, as a program that reuses them would; whether
	// streaming wins there depends on how much of the shared L3 other
	// cores take at that moment. On the Zen 4 guest runs an hour apart
	// found it from 16 MiB, from 8 MiB and from 2 MiB; with the 2 MiB
	// profile uarch-bench mem copied 4 MiB at 0.57-0.65x glibc's and
	// filled it at 0.64-0.75x, and with 8 MiB the python-buffers replay
	// (8 MiB copies) ran at 0.70-0.74x against 1.02-1.31x with the
	// default 16 MiB: the buffers fitted the L3 again. A wrong stream
	// costs more than a missed one gains, so a profile may move the
	// threshold up from the policy's, not down.
	uint64_t nt_floor = 0;
	// The same for fills of other bytes than 0, which some machines stream
	// far slower than zeros (the Zen 4 guest: 3x; select.cpp). The tuner
	// passes the policy's, or its copy threshold where the policy never
	// streams them.
	uint64_t nt_fill_floor = 0;
	// The policy's own rep windows (min 0: never). Where the tuner finds
	// no window of its own, the profile keeps the policy's unless a size
	// timed inside it shows rep slower than the loop by the margin: the
	// tuner times each size alone and cannot see every reason a window was
	// opened (on Zen 4, rep stosb from 64 KiB wins a replay of gzip's
	// fills, where each size alone runs level; select.cpp), so "level"
	// here is no evidence against it. Where the tuner's window ends inside
	// the policy's, it runs on to the policy's end on the same terms.
	Window movsb_policy, stosb_policy;
};

// The window where rep wins, among the sizes below `below` (from there the
// non-temporal path runs). Each size scores its gain beyond the margin at
// the worse alignment, a loss three times over, and 0 where rep is ahead
// by less than the margin (decide.cpp): the window
// runs from a winning size to a winning size and has the largest total
// score, so a long run of wins within the noise loses to a shorter one of
// large wins, and a small loss may sit between wins that outweigh it. At
// least two winning sizes (one suffices when it is the last size below
// `below`). min is the window's first size; max the first size after it,
// or Window::open when it reaches the last size considered.
Window rep_window(const std::vector<RepRow> &rows, double margin, uint64_t below = Window::open);

// The first size from which NT stores win at that size and every larger
// one tried (found == false when the largest size tried does not favour them).
bool nt_threshold(const std::vector<NtRow> &rows, double margin, uint64_t *out);

// The largest stride within margin of the fastest (fewer prefetch instructions).
uint32_t best_stride(const std::vector<StrideRow> &rows, double margin);

// The spin budget: as long as a futex wake-up takes (2-competitive
// spin-then-block), rounded to 100 ns, within [1 us, 100 us].
uint32_t spin_budget(const Timing &futex_wake);

Profile decide(const Evidence &e, const Rules &r);

// "rep_movsb_threshold=...:...": the UARCH_TUNABLES form of p (without
// what p leaves undecided).
std::string profile_string(const Profile &p);

} // namespace uarch::tune
