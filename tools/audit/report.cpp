// uarch-audit: text table, JSON, diff and advice.
#include "report.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <iomanip>
#include <map>
#include <set>
#include <string_view>

namespace audit {

namespace {

bool is_bucket(std::string_view name)
{
	return name.size() >= 2 && name.front() == '[' && name.back() == ']';
}

std::string hex(std::uint64_t v)
{
	char buf[24];
	std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
	return buf;
}

// "a, b, c and 4 more"
std::string some_names(const std::vector<std::string> &names)
{
	std::string s;
	const std::size_t shown = std::min<std::size_t>(names.size(), 3);
	for (std::size_t k = 0; k < shown; ++k)
		s += (k ? ", " : "") + names[k];
	if (names.size() > shown) s += " and " + std::to_string(names.size() - shown) + " more";
	return s;
}

std::vector<std::string> functions_with(const ObjectReport &r, Counter c)
{
	std::vector<std::string> names;
	for (const auto &[name, counts] : r.functions)
		if (counts[c]) names.push_back(name);
	return names;
}

// Writes text after prefix, wrapped at 100 columns, continued under its start.
void wrap(std::ostream &os, std::string_view prefix, std::string_view text)
{
	constexpr std::size_t kWidth = 100;
	std::size_t col = prefix.size();
	os << prefix;
	while (!text.empty()) {
		const std::size_t sp = text.find(' ');
		const std::string_view word = text.substr(0, sp);
		text = sp == std::string_view::npos ? std::string_view{} : text.substr(sp + 1);
		if (col > prefix.size() && col + 1 + word.size() > kWidth) {
			os << '\n' << std::string(prefix.size(), ' ');
			col = prefix.size();
		} else if (col > prefix.size()) {
			os << ' ';
			++col;
		}
		os << word;
		col += word.size();
	}
	os << '\n';
}

// The counters worth a column: those of the architectures present.
std::vector<Counter> counters_of(const std::vector<Arch> &archs)
{
	std::set<Counter> all;
	for (Arch a : archs)
		for (Counter c : counters_for(a))
			all.insert(c);
	return {all.begin(), all.end()};
}

std::vector<Counter> counters_of(const std::vector<ObjectReport> &reports)
{
	std::vector<Arch> archs;
	for (const auto &r : reports)
		archs.push_back(r.arch);
	return counters_of(archs);
}

void print_totals(std::ostream &os, const Counts &t, const std::vector<Counter> &counters)
{
	for (std::size_t k = 0; k < counters.size(); ++k) {
		os << (k % 4 == 0 ? "   " : "  ") << ' ' << std::left << std::setw(12)
		   << counter_name(counters[k]) << std::right << std::setw(7) << t[counters[k]];
		if (k % 4 == 3 || k + 1 == counters.size()) os << '\n';
	}
}

void print_object(std::ostream &os, const ObjectReport &r, std::size_t top,
                  const std::vector<std::string> &adv)
{
	const auto nfunctions = std::count_if(r.functions.begin(), r.functions.end(),
	                                      [](const auto &f) { return !is_bucket(f.first); });
	os << r.name << ": " << arch_name(r.arch) << ' ' << r.type << ", " << nfunctions
	   << (nfunctions == 1 ? " function, " : " functions, ") << r.totals.insns
	   << " instructions\n";
	const auto all = counters_for(r.arch);
	os << "  totals:\n";
	print_totals(os, r.totals, {all.begin(), all.end()});

	using Entry = std::pair<const std::string, Counts>;
	std::vector<const Entry *> ranked;
	for (const auto &f : r.functions)
		if (f.second.flagged()) ranked.push_back(&f);
	std::stable_sort(ranked.begin(), ranked.end(), [](const Entry *a, const Entry *b) {
		return a->second.flagged() > b->second.flagged();
	});
	if (ranked.empty()) {
		os << "  no counted instructions in any function\n";
	} else if (top > 0) {
		const std::size_t shown = std::min(top, ranked.size());
		std::vector<Counter> columns;
		for (Counter c : all)
			if (r.totals[c]) columns.push_back(c);
		std::size_t width = 8;
		for (std::size_t k = 0; k < shown; ++k)
			width = std::max(width, std::min<std::size_t>(ranked[k]->first.size(), 48));
		os << "  top functions (" << shown << " of " << ranked.size()
		   << " with counted instructions):\n";
		os << "    " << std::left << std::setw(static_cast<int>(width)) << "function"
		   << std::right;
		for (Counter c : columns)
			os << ' ' << counter_name(c);
		os << "  insns\n";
		for (std::size_t k = 0; k < shown; ++k) {
			os << "    " << std::left << std::setw(static_cast<int>(width))
			   << ranked[k]->first << std::right;
			for (Counter c : columns)
				os << ' ' << std::setw(static_cast<int>(counter_name(c).size()))
				   << ranked[k]->second[c];
			os << ' ' << std::setw(6) << ranked[k]->second.insns << '\n';
		}
	}

	struct Site {
		const std::string *function;
		const RepSite *site;
	};
	std::vector<Site> sites;
	for (const auto &[name, c] : r.functions)
		for (const RepSite &s : c.reps)
			sites.push_back({&name, &s});
	std::stable_sort(sites.begin(), sites.end(), [](const Site &a, const Site &b) {
		return a.site->small() > b.site->small();
	});
	if (!sites.empty() && top > 0) {
		os << "  rep movs/stos with a constant count:\n";
		for (std::size_t k = 0; k < std::min(top, sites.size()); ++k) {
			const RepSite &s = *sites[k].site;
			os << "    " << *sites[k].function << '+' << hex(s.offset) << ": " << s.insn
			   << ", count " << s.count << " = " << s.bytes << " bytes"
			   << (s.small() ? ", small\n" : "\n");
		}
		if (sites.size() > top) os << "    ... and " << sites.size() - top << " more\n";
	}
	for (const std::string &a : adv)
		wrap(os, "  advice: ", a);
}

// JSON string literal; bytes that are not UTF-8 become \u00XX.
void json_string(std::ostream &os, std::string_view s)
{
	const auto utf8_len = [&](std::size_t i) -> std::size_t {
		const auto c = static_cast<unsigned char>(s[i]);
		const std::size_t n = c >= 0xF0 && c < 0xF5 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
		if (n == 0 || c >= 0xF5 || i + n > s.size()) return 0;
		for (std::size_t k = 1; k < n; ++k)
			if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
		return n;
	};
	os << '"';
	for (std::size_t i = 0; i < s.size(); ++i) {
		const auto c = static_cast<unsigned char>(s[i]);
		if (c == '"' || c == '\\') {
			os << '\\' << s[i];
		} else if (c >= 0x20 && c < 0x80) {
			os << s[i];
		} else if (const std::size_t n = c >= 0x80 ? utf8_len(i) : 0; n > 0) {
			os << s.substr(i, n);
			i += n - 1;
		} else {
			char buf[8];
			std::snprintf(buf, sizeof buf, "\\u%04x", c);
			os << buf;
		}
	}
	os << '"';
}

void json_counts(std::ostream &os, const Counts &c, const std::vector<Counter> &counters,
                 bool skip_zero)
{
	os << "{\"insns\": " << c.insns;
	for (Counter k : counters)
		if (!skip_zero || c[k]) os << ", \"" << counter_name(k) << "\": " << c[k];
	if (!c.reps.empty()) {
		os << ", \"rep_const\": [";
		for (std::size_t i = 0; i < c.reps.size(); ++i) {
			const RepSite &s = c.reps[i];
			os << (i ? ", " : "") << "{\"insn\": \"" << s.insn
			   << "\", \"offset\": " << s.offset << ", \"count\": " << s.count
			   << ", \"bytes\": " << s.bytes
			   << ", \"small\": " << (s.small() ? "true" : "false") << '}';
		}
		os << ']';
	}
	os << '}';
}

// The member name of "archive(member)", else the name.
std::string member_of(const std::string &name)
{
	const auto open = name.rfind('(');
	if (open == std::string::npos || name.back() != ')') return name;
	return name.substr(open + 1, name.size() - open - 2);
}

// A counter that differs between two objects: per function, or in total
// (function empty); Counter::count_ stands for the instruction count.
struct Change {
	std::string function;
	Counter counter;
	std::uint64_t before, after;
};

struct ObjectDiff {
	const ObjectReport *before, *after; // null when the other has no such member
	std::vector<Change> functions;      // sorted by function
	std::vector<Change> totals;         // every counter, changed or not
};

const ObjectReport kNoObject{};

ObjectDiff diff_objects(const ObjectReport *before, const ObjectReport *after)
{
	const ObjectReport &b = before ? *before : kNoObject;
	const ObjectReport &a = after ? *after : kNoObject;
	const std::vector<Counter> counters =
		counters_of(std::vector<Arch>{(before ? b : a).arch, (after ? a : b).arch});
	ObjectDiff d{before, after, {}, {}};
	std::set<std::string> names;
	for (const auto &f : b.functions)
		names.insert(f.first);
	for (const auto &f : a.functions)
		names.insert(f.first);
	for (const std::string &name : names) {
		const auto fb = b.functions.find(name);
		const auto fa = a.functions.find(name);
		for (Counter c : counters) {
			const std::uint64_t x = fb == b.functions.end() ? 0 : fb->second[c];
			const std::uint64_t y = fa == a.functions.end() ? 0 : fa->second[c];
			if (x != y) d.functions.push_back({name, c, x, y});
		}
	}
	d.totals.push_back({"", Counter::count_, b.totals.insns, a.totals.insns});
	for (Counter c : counters)
		d.totals.push_back({"", c, b.totals[c], a.totals[c]});
	return d;
}

// Objects paired: one with one, else archive members by name.
std::vector<ObjectDiff> diff_files(const std::vector<ObjectReport> &before,
                                   const std::vector<ObjectReport> &after)
{
	std::vector<ObjectDiff> out;
	if (before.size() == 1 && after.size() == 1) {
		out.push_back(diff_objects(&before[0], &after[0]));
		return out;
	}
	const auto by_member = [](const std::vector<ObjectReport> &in) {
		std::map<std::string, const ObjectReport *> m;
		for (const ObjectReport &r : in)
			m.emplace(member_of(r.name), &r);   // the first of equal names, as ar x does
		return m;
	};
	const auto b_members = by_member(before), a_members = by_member(after);
	const auto find = [](const auto &members, const ObjectReport &r) -> const ObjectReport * {
		const auto it = members.find(member_of(r.name));
		return it == members.end() ? nullptr : it->second;
	};
	for (const auto &b : before)
		out.push_back(diff_objects(&b, find(a_members, b)));
	for (const auto &a : after)
		if (!find(b_members, a)) out.push_back(diff_objects(nullptr, &a));
	return out;
}

std::string_view change_name(const Change &c)
{
	return c.counter == Counter::count_ ? "insns" : counter_name(c.counter);
}

void print_diff_text(std::ostream &os, const std::vector<ObjectDiff> &diffs)
{
	// Among several objects (archive members), those with no change get
	// one line together.
	std::vector<std::string> unchanged;
	for (const ObjectDiff &d : diffs) {
		const bool totals_changed = std::any_of(d.totals.begin(), d.totals.end(),
		                                        [](const Change &c) { return c.before != c.after; });
		if (d.functions.empty() && !totals_changed) {
			if (diffs.size() > 1) {
				unchanged.push_back(member_of((d.before ? d.before : d.after)->name));
				continue;
			}
			os << "  no counter changed\n";
			continue;
		}
		if (diffs.size() > 1)
			os << "\n== " << (d.before ? member_of(d.before->name) : "(none)") << " -> "
			   << (d.after ? member_of(d.after->name) : "(none)") << '\n';
		std::size_t width = 8;
		for (const Change &c : d.functions)
			width = std::max(width, std::min<std::size_t>(c.function.size(), 48));
		const auto row = [&](std::string_view function, std::string_view counter,
		                     const auto &x, const auto &y) {
			os << "  " << std::left << std::setw(static_cast<int>(width)) << function
			   << "  " << std::setw(12) << counter << std::right << std::setw(8) << x
			   << std::setw(8) << y << '\n';
		};
		row("function", "counter", "before", "after");
		for (const Change &c : d.functions)
			row(c.function, change_name(c), c.before, c.after);
		for (const Change &c : d.totals)
			if (c.before != c.after) row("(total)", change_name(c), c.before, c.after);
	}
	if (!unchanged.empty())
		os << '\n' << unchanged.size() << " objects with no counter changed: "
		   << some_names(unchanged) << '\n';
}

void print_diff_json(std::ostream &os, const std::vector<ObjectDiff> &diffs)
{
	const auto name_or_null = [&](const ObjectReport *r) {
		if (r)
			json_string(os, r->name);
		else
			os << "null";
	};
	const auto pair = [&](const Change &c) {
		os << '"' << change_name(c) << "\": [" << c.before << ", " << c.after << ']';
	};
	os << "  \"objects\": [";
	for (std::size_t k = 0; k < diffs.size(); ++k) {
		const ObjectDiff &d = diffs[k];
		os << (k ? ",\n    {" : "\n    {") << "\"before\": ";
		name_or_null(d.before);
		os << ", \"after\": ";
		name_or_null(d.after);
		os << ",\n     \"functions\": {";
		for (std::size_t i = 0; i < d.functions.size(); ++i) {
			const Change &c = d.functions[i];
			if (i == 0 || c.function != d.functions[i - 1].function) {
				os << (i ? "}, " : "");
				json_string(os, c.function);
				os << ": {";
			} else {
				os << ", ";
			}
			pair(c);
		}
		os << (d.functions.empty() ? "}" : "}}") << ",\n     \"totals\": {";
		for (std::size_t i = 0; i < d.totals.size(); ++i) {
			os << (i ? ", " : "");
			pair(d.totals[i]);
		}
		os << "}}";
	}
	os << (diffs.empty() ? "]" : "\n  ]");
}

} // namespace

std::vector<std::string> advice(const ObjectReport &r)
{
	std::vector<std::string> out;
	std::size_t small = 0;
	std::vector<std::string> small_in;
	for (const auto &[name, c] : r.functions) {
		const auto n = std::count_if(c.reps.begin(), c.reps.end(),
		                             [](const RepSite &s) { return s.small(); });
		small += static_cast<std::size_t>(n);
		if (n) small_in.push_back(name);
	}
	if (small)
		out.push_back(
			std::to_string(small) + " rep movs/stos with a constant count below " +
			std::to_string(kSmallRepBytes) + " bytes (in " + some_names(small_in) +
			"): the compiler inlined a copy or clear as a string instruction, "
			"which starts slowly on CPUs without FSRM/FSRS. With gcc, build with "
			"-mmemcpy-strategy=unrolled_loop:256:noalign,libcall:-1:noalign "
			"-mmemset-strategy=unrolled_loop:256:noalign,libcall:-1:noalign "
			"(seed 001). uarch's preload library does not help here: inlined "
			"copies never call memcpy.");
	if (r.totals[Counter::mfence])
		out.push_back(std::to_string(r.totals[Counter::mfence]) + " mfence (in " +
		              some_names(functions_with(r, Counter::mfence)) +
		              "): where it is a full barrier between ordinary loads and stores, "
		              "uarch_smp_mb() from uarch.h does the same with a locked add below "
		              "the red zone (lock addl $0,-132(%rsp)), which is much cheaper "
		              "(seed 003). Keep mfence where it orders clflush or non-temporal "
		              "stores.");
	std::uint64_t prefetches = 0;
	for (Counter c : {Counter::prefetcht0, Counter::prefetcht1, Counter::prefetcht2,
	                  Counter::prefetchnta, Counter::prefetchw})
		prefetches += r.totals[c];
	if (r.arch == Arch::x86_64 && r.built_by_clang && prefetches == 0)
		out.push_back("no prefetch instruction in code built by clang: clang drops "
		              "__builtin_prefetch without a warning when it builds with -mno-sse "
		              "(seed 000). uarch_prefetch() from uarch.h is a prefetcht0 in inline "
		              "asm that no compiler flag removes.");
	return out;
}

void print_text(std::ostream &os, const std::vector<ObjectReport> &reports, std::size_t top)
{
	// Among several objects (an archive's members), those with nothing to
	// show get one line together.
	// Nothing counted leaves at most the advice about clang and prefetch,
	// which those objects then share.
	std::vector<std::string> quiet, quiet_advice;
	bool first = true;
	for (const ObjectReport &r : reports) {
		std::vector<std::string> adv = advice(r);
		if (reports.size() > 1 && r.totals.flagged() == 0) {
			quiet.push_back(r.name);
			for (std::string &a : adv)
				if (std::find(quiet_advice.begin(), quiet_advice.end(), a) == quiet_advice.end())
					quiet_advice.push_back(std::move(a));
			continue;
		}
		if (!first) os << '\n';
		first = false;
		print_object(os, r, top, adv);
	}
	if (reports.size() > 1) {
		if (!quiet.empty())
			os << (first ? "" : "\n") << quiet.size()
			   << " objects without counted instructions: " << some_names(quiet)
			   << '\n';
		for (const std::string &a : quiet_advice)
			wrap(os, "  advice: ", a);
		Counts all;
		for (const auto &r : reports)
			all.add(r.totals);
		os << "\nall " << reports.size() << " objects: " << all.insns << " instructions\n";
		print_totals(os, all, counters_of(reports));
	}
}

void print_json(std::ostream &os, const std::vector<ObjectReport> &reports)
{
	Counts all;
	std::set<std::string> used;
	os << "{\n  \"files\": {";
	for (std::size_t k = 0; k < reports.size(); ++k) {
		const ObjectReport &r = reports[k];
		all.add(r.totals);
		std::string key = r.name;
		for (int n = 2; !used.insert(key).second; ++n)
			key = r.name + " #" + std::to_string(n);
		const auto counters = counters_for(r.arch);
		const std::vector<Counter> cs(counters.begin(), counters.end());
		os << (k ? ",\n    " : "\n    ");
		json_string(os, key);
		os << ": {\n      \"arch\": \"" << arch_name(r.arch) << "\", \"type\": \"" << r.type
		   << "\", \"built_by_clang\": " << (r.built_by_clang ? "true" : "false")
		   << ",\n      \"totals\": ";
		json_counts(os, r.totals, cs, false);
		os << ",\n      \"functions\": {";
		bool first = true;
		for (const auto &[name, c] : r.functions) {
			os << (first ? "\n        " : ",\n        ");
			first = false;
			json_string(os, name);
			os << ": ";
			json_counts(os, c, cs, true);
		}
		os << (first ? "}" : "\n      }") << ",\n      \"advice\": [";
		const auto adv = advice(r);
		for (std::size_t a = 0; a < adv.size(); ++a) {
			os << (a ? ", " : "");
			json_string(os, adv[a]);
		}
		os << "]\n    }";
	}
	os << (reports.empty() ? "}" : "\n  }") << ",\n  \"totals\": ";
	json_counts(os, all, counters_of(reports), false);
	os << "\n}\n";
}

void print_diff(std::ostream &os, const std::string &before_name,
                const std::vector<ObjectReport> &before, const std::string &after_name,
                const std::vector<ObjectReport> &after, bool json)
{
	const std::vector<ObjectDiff> diffs = diff_files(before, after);
	if (json) {
		os << "{\n  \"before\": ";
		json_string(os, before_name);
		os << ",\n  \"after\": ";
		json_string(os, after_name);
		os << ",\n";
		print_diff_json(os, diffs);
		os << "\n}\n";
	} else {
		os << "before: " << before_name << "\nafter:  " << after_name << '\n';
		print_diff_text(os, diffs);
	}
}

} // namespace audit
