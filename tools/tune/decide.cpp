#include "decide.h"
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>

namespace uarch::tune {

static bool faster(const Timing &cand, const Timing &base, double margin)
{
	return cand.ns > 0 && base.ns > 0 && cand.ns <= base.ns * (1 - margin);
}

// A size's score for rep, g = ln(loop / rep) at the worse alignment: its
// gain beyond the margin, g - m with m = -ln(1 - margin), and a loss counts
// three times (3g - m): a size the window makes slower is a row below the C
// library's, which the user sees, while a missed win only leaves a gain
// unclaimed. Rep wins a size where g >= m (rep.ns <= loop.ns * (1 - margin)
// at both alignments). Where rep is no slower at either alignment but
// within the margin (0 <= g < m) the size scores 0: it neither adds to a
// window nor breaks one, so a window does not stop at a plateau where rep
// stays a little ahead. Scoring those sizes g - m, as a loss, cut the
// Emerald Rapids guest's rep movsb window at 28 KiB where rep was 0-4%
// ahead up to 512 KiB and 7-10% at 1 MiB, and uarch-bench mem with that
// profile copied 1 MiB at 0.89-0.90x glibc's against 1.00-1.04x with the
// built-in window (tune_decide_test.cpp). A size without both timings
// has no gain (NaN): it never wins and scores -1.
// The margin as a gain: rep wins a size where its gain is at least this.
static double margin_gain(double margin)
{
	return -std::log(1 - margin);
}

static double rep_gain(const RepRow &r)
{
	double g = 0;
	for (int a = 0; a < align_count; a++) {
		if (!(r.rep[a].ns > 0 && r.loop[a].ns > 0))
			return NAN;
		double ga = std::log(r.loop[a].ns / r.rep[a].ns);
		if (a == 0 || ga < g)
			g = ga;
	}
	return g;
}

Window rep_window(const std::vector<RepRow> &rows, double margin, uint64_t below)
{
	size_t end = 0;   // rows at or above `below` belong to the non-temporal path
	while (end < rows.size() && rows[end].size < below)
		end++;
	const double m = margin_gain(margin);
	std::vector<double> gain(end);
	for (size_t k = 0; k < end; k++)
		gain[k] = rep_gain(rows[k]);
	auto wins = [&](size_t k) { return gain[k] >= m; };
	auto score = [&](size_t k) {
		double g = gain[k];
		return std::isnan(g) ? -1 : g >= m ? g - m : g >= 0 ? 0 : 3 * g - m;
	};
	// The window from a winning size to a winning size with the largest
	// total score; ties broken toward the one found first (the smaller).
	double best = 0;
	size_t best_i = 0, best_j = 0, best_wins = 0;   // [best_i, best_j)
	for (size_t i = 0; i < end; i++) {
		if (!wins(i))
			continue;
		double sum = 0;
		size_t n_wins = 0;
		for (size_t j = i; j < end; j++) {
			bool win = wins(j);
			sum += score(j);
			n_wins += win;
			if (win && sum > best) {
				best = sum;
				best_i = i;
				best_j = j + 1;
				best_wins = n_wins;
			}
		}
	}
	Window w;
	// One winning size alone is as likely noise as a crossover, unless it
	// is the last one before the non-temporal path takes over.
	bool last = best_j == end && end < rows.size();
	if (best_wins < 2 && !(best_wins == 1 && last))
		return w;
	w.min = rows[best_i].size;
	w.max = best_j < end ? rows[best_j].size : Window::open;
	return w;
}

// w where the tuner found a window, run on to the policy's end; else the
// policy's; in both, unless a size timed there has rep slower than the
// loop by the margin (decide.h).
static Window unless_contradicted(Window w, const Window &policy, const std::vector<RepRow> &rows,
				  double margin)
{
	if (!policy.min)
		return w;
	const double m = margin_gain(margin);
	auto contradicted = [&](uint64_t lo, uint64_t hi) {
		for (const RepRow &r : rows)
			if (r.size >= lo && r.size < hi && rep_gain(r) <= -m)   // NaN: no evidence
				return true;
		return false;
	};
	if (!w.min)
		return contradicted(policy.min, policy.max) ? w : policy;
	// The tuner's window ends where its wins end; it runs on to the
	// policy's end unless a size timed between has rep slower by the
	// margin. uarch-tune --quick on the Zen 5 guest (family 0x1a model 2):
	// rep movsb 1.43-1.71x the loop at 28-64 KiB, 1.00x (dst+1 1.11x) at
	// 256 KiB, 1.03-1.24x at 1 MiB, 1.04-1.19x at 4 MiB; the window ended
	// at 256 KiB, on a 0.3% loss, and handed 256 KiB-8 MiB back to the
	// loop that the full run and the policy give to rep movsb.
	if (w.max < policy.max && w.max >= policy.min && !contradicted(w.max, policy.max))
		w.max = policy.max;
	return w;
}

bool nt_threshold(const std::vector<NtRow> &rows, double margin, uint64_t *out)
{
	size_t i = rows.size();
	while (i > 0 && faster(rows[i - 1].nt, rows[i - 1].temporal, margin))
		i--;
	if (i == rows.size())
		return false;
	*out = rows[i].size;
	return true;
}

uint32_t best_stride(const std::vector<StrideRow> &rows, double margin)
{
	double best = 0;
	for (const StrideRow &r : rows)
		if (r.t.ns > 0 && (best == 0 || r.t.ns < best))
			best = r.t.ns;
	uint32_t stride = 0;
	for (const StrideRow &r : rows)
		if (r.t.ns > 0 && r.t.ns <= best * (1 + margin) && r.stride > stride)
			stride = r.stride;
	return stride;
}

uint32_t spin_budget(const Timing &futex_wake)
{
	double ns = futex_wake.ns;
	if (!(ns > 0))
		return 0;
	ns = std::clamp(ns, 1000.0, 100000.0);
	return uint32_t(ns / 100 + 0.5) * 100;
}

static void collect(std::vector<double> *v, const Timing &t)
{
	if (t.ns > 0)
		v->push_back(t.spread);
}

Profile decide(const Evidence &e, const Rules &r)
{
	Profile p;
	std::vector<double> spreads;
	for (const auto *rows : {&e.movsb, &e.stosb})
		for (const RepRow &row : *rows)
			for (int a = 0; a < align_count; a++) {
				collect(&spreads, row.loop[a]);
				collect(&spreads, row.rep[a]);
			}
	for (const auto *rows : {&e.nt, &e.nt_set})
		for (const NtRow &row : *rows) {
			collect(&spreads, row.temporal);
			collect(&spreads, row.nt);
		}
	for (const StrideRow &row : e.stride)
		collect(&spreads, row.t);
	collect(&spreads, e.futex_wake);
	if (!spreads.empty()) {
		std::sort(spreads.begin(), spreads.end());
		size_t m = spreads.size();
		p.noise = m % 2 ? spreads[m / 2] : (spreads[m / 2 - 1] + spreads[m / 2]) / 2;
		p.noise_max = spreads.back();
	}
	p.too_noisy = spreads.empty() || p.noise > r.noise_limit;

	p.have_nt = nt_threshold(e.nt, r.margin, &p.nt_min);
	if (p.have_nt && p.nt_min < r.nt_floor)
		p.nt_min = r.nt_floor;   // the winning sizes run to the end: it wins there too
	uint64_t below = p.have_nt ? p.nt_min : Window::open;
	Window own_movsb = rep_window(e.movsb, r.margin, below), own_stosb = rep_window(e.stosb, r.margin, below);
	p.movsb = unless_contradicted(own_movsb, r.movsb_policy, e.movsb, r.margin);
	p.stosb = unless_contradicted(own_stosb, r.stosb_policy, e.stosb, r.margin);
	p.movsb_wins_end = own_movsb.min && p.movsb.max != own_movsb.max ? own_movsb.max : 0;
	p.stosb_wins_end = own_stosb.min && p.stosb.max != own_stosb.max ? own_stosb.max : 0;
	p.movsb_kept = !own_movsb.min && p.movsb.min;
	p.stosb_kept = !own_stosb.min && p.stosb.min;
	// rep movsb never overlaps the non-temporal copy: the NT loop takes over.
	if (p.have_nt && p.movsb.min && p.movsb.max > p.nt_min)
		p.movsb.max = p.nt_min > p.movsb.min ? p.nt_min : p.movsb.min;
	if (p.movsb.min && p.movsb.max <= p.movsb.min)
		p.movsb = Window{};
	// Fills of other bytes than 0 stream from their own crossover, as
	// copies do from theirs.
	uint64_t set_nt = 0;
	p.have_nt_fill = nt_threshold(e.nt_set, r.margin, &set_nt);
	p.nt_fill_min = p.have_nt_fill && set_nt < r.nt_fill_floor ? r.nt_fill_floor : set_nt;
	// Fills past the threshold stream unless rep stosb's window covers
	// them: it ends where streaming fills win (at or past the threshold),
	// or never when they do not. Judged on those fills of 0x5a, though the
	// window serves zero fills as well.
	if (p.have_nt && p.stosb.min && p.stosb.max > p.nt_min && p.have_nt_fill)
		p.stosb.max = set_nt > p.nt_min ? set_nt : p.nt_min;
	p.prefetch_stride = best_stride(e.stride, r.margin);
	if (e.want_spin)
		p.spin_ns = spin_budget(e.futex_wake);
	return p;
}

static std::string number(uint64_t v)
{
	char b[32];
	if (v >= Window::open) return "inf";
	if (v && v % (uint64_t(1) << 30) == 0) std::snprintf(b, sizeof b, "%" PRIu64 "G", v >> 30);
	else if (v && v % (uint64_t(1) << 20) == 0) std::snprintf(b, sizeof b, "%" PRIu64 "M", v >> 20);
	else if (v && v % 1024 == 0) std::snprintf(b, sizeof b, "%" PRIu64 "K", v >> 10);
	else std::snprintf(b, sizeof b, "%" PRIu64, v);
	return b;
}

std::string profile_string(const Profile &p)
{
	std::string s;
	auto add = [&](const char *key, uint64_t v) {
		s += (s.empty() ? "" : ":") + std::string(key) + "=" + number(v);
	};
	add("rep_movsb_threshold", p.movsb.min);
	if (p.movsb.min)
		add("rep_movsb_stop", p.movsb.max);
	add("rep_stosb_threshold", p.stosb.min);
	// rep stosb's default stop is already "never": an open window needs none.
	if (p.stosb.min && p.stosb.max != Window::open)
		add("rep_stosb_stop", p.stosb.max);
	if (p.have_nt)
		add("nt_threshold", p.nt_min);
	if (p.have_nt_fill)
		add("nt_fill_threshold", p.nt_fill_min);
	if (p.prefetch_stride)
		add("prefetch_stride", p.prefetch_stride);
	if (p.spin_ns)
		add("idle_spin_ns", p.spin_ns);
	return s;
}

} // namespace uarch::tune
