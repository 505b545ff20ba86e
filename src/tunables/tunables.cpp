// The UARCH_TUNABLES parser. Runs inside ifunc resolvers: no libc, no
// pointer tables (see probe/cpu.cpp), bounded by max_input and max_entries.
#include "tunables/tunables.h"
#include "probe/cpu.h"

namespace uarch {

static const char key_names[uint32_t(Key::count)][20] = {
	"",
#define UARCH_OP(name, ret, params, args) #name,
#include "table/ops.def"
	"mask", "rep_movsb_threshold", "rep_movsb_stop", "rep_stosb_threshold",
	"rep_stosb_stop", "nt_threshold", "nt_fill_threshold", "prefetch_stride",
	"idle_spin_ns", "idle_monitor_ns", "idle_stages", "idle_c01",
};

const char *key_name(Key k)
{
	return uint32_t(k) < uint32_t(Key::count) ? key_names[uint32_t(k)] : "";
}

static const char verdict_texts[8][40] = {
	"applied", "overridden by a later entry", "empty entry", "no '=' in entry",
	"unknown key", "bad value", "too many entries", "input too long, rest ignored",
};

const char *verdict_text(Verdict v) { return verdict_texts[uint32_t(v) & 7]; }

// Decimal or 0x hex, optional K/M/G (x1024), or "inf"; at most
// Tunables::max_number.
static bool parse_number(const char *s, size_t n, uint64_t *out)
{
	constexpr uint64_t limit = Tunables::max_number;
	if (n == 3 && s[0] == 'i' && s[1] == 'n' && s[2] == 'f') {
		*out = limit;
		return true;
	}
	size_t i = 0;
	unsigned base = 10;
	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	uint64_t v = 0;
	size_t digits = 0;
	for (; i < n; i++, digits++) {
		char c = s[i];
		unsigned d;
		if (c >= '0' && c <= '9') d = unsigned(c - '0');
		else if (base == 16 && c >= 'a' && c <= 'f') d = unsigned(c - 'a' + 10);
		else if (base == 16 && c >= 'A' && c <= 'F') d = unsigned(c - 'A' + 10);
		else break;
		v = v * base + d;
		if (v > limit)
			return false;
	}
	if (digits == 0)
		return false;
	if (i < n) {
		unsigned shift;
		switch (s[i]) {
		case 'k': case 'K': shift = 10; break;
		case 'm': case 'M': shift = 20; break;
		case 'g': case 'G': shift = 30; break;
		default: return false;
		}
		if (i + 1 != n || v > (limit >> shift))
			return false;
		v <<= shift;
	}
	*out = v;
	return true;
}

// "-avx512,-fsrm": only removals; "avx512" alone means every avx512* bit.
static bool parse_mask(const char *s, size_t n, uint64_t *out)
{
	uint64_t m = 0;
	size_t i = 0;
	while (i < n) {
		size_t j = i;
		while (j < n && s[j] != ',')
			j++;
		if (j - i < 2 || s[i] != '-')
			return false;
		const char *name = s + i + 1;
		size_t len = j - i - 1;
		bool found = false;
		for (uint32_t f = 0; f < f_count; f++) {
			const char *fn = feature_name(f);
			if (name_equal(name, len, fn)) {
				m |= uint64_t(1) << f;
				found = true;
			}
		}
		if (name_equal(name, len, "avx512")) {
			m |= (uint64_t(1) << f_avx512f) | (uint64_t(1) << f_avx512bw) | (uint64_t(1) << f_avx512vl) |
			     (uint64_t(1) << f_avx512fp16);
			found = true;
		}
		if (!found)
			return false;
		i = j + 1;
		if (j + 1 == n)   // trailing comma
			return false;
	}
	*out = m;
	return n > 0;
}

static bool is_numeric(Key k)
{
	return k >= Key::rep_movsb_threshold && k <= Key::idle_monitor_ns;
}

const Entry *Tunables::find(Key k) const
{
	for (uint32_t i = 0; i < nentries; i++)
		if (entries[i].key == k && entries[i].verdict == Verdict::applied)
			return &entries[i];
	return nullptr;
}

uint64_t Tunables::mask() const
{
	uint64_t m = 0;
	for (uint32_t i = 0; i < nentries; i++)
		if (entries[i].key == Key::mask && entries[i].verdict == Verdict::applied)
			m |= entries[i].features;
	return m;
}

static void record(Tunables *t, const Entry &e, uint32_t room)
{
	if (t->nentries < room)
		t->entries[t->nentries++] = e;
	else
		t->ndropped++;
}

void parse_tunables(const char *s, size_t len, Tunables *t)
{
	zero(t, sizeof *t);
	t->input = s;
	if (!s)
		return;
	size_t n = 0;
	while (n < len && n < Tunables::max_input && s[n])
		n++;
	bool truncated = n == Tunables::max_input && n < len && s[n];
	t->input_length = uint32_t(n);
	// Cut input: the last slot is kept for the entry that says so.
	const uint32_t room = truncated ? Tunables::max_entries - 1 : Tunables::max_entries;

	size_t i = 0;
	while (i <= n) {
		size_t j = i;
		while (j < n && s[j] != ':')
			j++;
		if (j == n && i == n && n > 0)
			break;     // nothing after the last ':' was handled as empty below
		if (truncated && j == n && s[n] != ':')
			break;     // an entry that runs on past max_input: cut, not applied
		Entry e;
		zero(&e, sizeof e);
		e.offset = uint32_t(i);
		e.length = uint32_t(j - i);
		if (j == i) {
			e.verdict = Verdict::empty;
			if (n > 0)
				record(t, e, room);
			if (j >= n) break;
			i = j + 1;
			continue;
		}
		size_t eq = i;
		while (eq < j && s[eq] != '=')
			eq++;
		if (eq == j) {
			e.verdict = Verdict::no_equals;
		} else {
			e.value_offset = uint32_t(eq + 1);
			e.value_length = uint32_t(j - eq - 1);
			const char *v = s + eq + 1;
			size_t vn = j - eq - 1;
			for (uint32_t k = 1; k < uint32_t(Key::count); k++)
				if (name_equal(s + i, eq - i, key_names[k]))
					e.key = Key(k);
			if (e.key == Key::none) {
				e.verdict = Verdict::unknown_key;
			} else if (is_numeric(e.key)) {
				e.verdict = parse_number(v, vn, &e.number) ? Verdict::applied : Verdict::bad_value;
			} else if (e.key == Key::mask) {
				e.verdict = parse_mask(v, vn, &e.features) ? Verdict::applied : Verdict::bad_value;
			} else if (e.key == Key::idle_c01) {
				e.verdict = (vn == 1 && (v[0] == '0' || v[0] == '1')) ? Verdict::applied : Verdict::bad_value;
				e.number = vn == 1 && v[0] == '1';
			} else {
				// Variant and stage names: syntax only here; the policy
				// decides whether they exist and fit this CPU.
				bool ok = vn > 0 && vn < 32;
				for (size_t q = 0; ok && q < vn; q++) {
					char c = v[q];
					ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
					     (c == ',' && e.key == Key::idle_stages);
				}
				e.verdict = ok ? Verdict::applied : Verdict::bad_value;
			}
		}
		// A later entry for the same key wins; masks accumulate. An entry
		// past the room is dropped and overrides nothing.
		if (t->nentries >= room)
			e.verdict = Verdict::too_many;
		if (e.verdict == Verdict::applied && e.key != Key::mask)
			for (uint32_t k = 0; k < t->nentries; k++)
				if (t->entries[k].key == e.key && t->entries[k].verdict == Verdict::applied)
					t->entries[k].verdict = Verdict::overridden;
		record(t, e, room);
		if (j >= n)
			break;
		i = j + 1;
	}
	if (truncated) {   // from the cut entry's start, or from the limit
		Entry e;
		zero(&e, sizeof e);
		e.verdict = Verdict::truncated;
		e.offset = uint32_t(i < n ? i : n);
		t->entries[t->nentries++] = e;   // the slot kept for it
	}
}

} // namespace uarch
