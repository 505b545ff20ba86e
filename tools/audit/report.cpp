// uarch-audit: text table, JSON, diff and advice.
#include "report.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <iomanip>
#include <set>
#include <string_view>

namespace audit {

namespace {

bool is_bucket(std::string_view name) {
    return name.size() >= 2 && name.front() == '[' && name.back() == ']';
}

std::string hex(std::uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
    return buf;
}

// "a, b, c and 4 more"
std::string some_names(const std::vector<std::string>& names) {
    std::string s;
    const std::size_t shown = std::min<std::size_t>(names.size(), 3);
    for (std::size_t k = 0; k < shown; ++k) s += (k ? ", " : "") + names[k];
    if (names.size() > shown) s += " and " + std::to_string(names.size() - shown) + " more";
    return s;
}

std::vector<std::string> functions_with(const ObjectReport& r, Counter c) {
    std::vector<std::string> names;
    for (const auto& [name, counts] : r.functions)
        if (counts[c]) names.push_back(name);
    return names;
}

// Writes text after prefix, wrapped at 100 columns, continued under its start.
void wrap(std::ostream& os, std::string_view prefix, std::string_view text) {
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
std::vector<Counter> counters_of(const std::vector<Arch>& archs) {
    std::set<Counter> all;
    for (Arch a : archs)
        for (Counter c : counters_for(a)) all.insert(c);
    return {all.begin(), all.end()};
}

std::vector<Counter> counters_of(const std::vector<ObjectReport>& reports) {
    std::vector<Arch> archs;
    for (const auto& r : reports) archs.push_back(r.arch);
    return counters_of(archs);
}

void print_totals(std::ostream& os, const Counts& t, const std::vector<Counter>& counters) {
    for (std::size_t k = 0; k < counters.size(); ++k) {
        os << (k % 4 == 0 ? "   " : "  ") << ' ' << std::left << std::setw(12)
           << counter_name(counters[k]) << std::right << std::setw(7) << t[counters[k]];
        if (k % 4 == 3 || k + 1 == counters.size()) os << '\n';
    }
}

void print_object(std::ostream& os, const ObjectReport& r, std::size_t top) {
    const auto nfunctions = std::count_if(r.functions.begin(), r.functions.end(),
                                          [](const auto& f) { return !is_bucket(f.first); });
    os << r.name << ": " << arch_name(r.arch) << ' ' << r.type << ", " << nfunctions
       << (nfunctions == 1 ? " function, " : " functions, ") << r.totals.insns
       << " instructions\n";
    const auto all = counters_for(r.arch);
    os << "  totals:\n";
    print_totals(os, r.totals, {all.begin(), all.end()});

    using Entry = std::pair<const std::string, Counts>;
    std::vector<const Entry*> ranked;
    for (const auto& f : r.functions)
        if (f.second.flagged()) ranked.push_back(&f);
    std::stable_sort(ranked.begin(), ranked.end(), [](const Entry* a, const Entry* b) {
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
        os << "  top functions (" << shown << " of " << ranked.size() << " with counted instructions):\n";
        os << "    " << std::left << std::setw(static_cast<int>(width)) << "function" << std::right;
        for (Counter c : columns) os << ' ' << counter_name(c);
        os << "  insns\n";
        for (std::size_t k = 0; k < shown; ++k) {
            os << "    " << std::left << std::setw(static_cast<int>(width)) << ranked[k]->first
               << std::right;
            for (Counter c : columns)
                os << ' ' << std::setw(static_cast<int>(counter_name(c).size()))
                   << ranked[k]->second[c];
            os << ' ' << std::setw(6) << ranked[k]->second.insns << '\n';
        }
    }

    struct Site {
        const std::string* function;
        const RepSite* site;
    };
    std::vector<Site> sites;
    for (const auto& [name, c] : r.functions)
        for (const RepSite& s : c.reps) sites.push_back({&name, &s});
    std::stable_sort(sites.begin(), sites.end(), [](const Site& a, const Site& b) {
        return a.site->small() > b.site->small();
    });
    if (!sites.empty() && top > 0) {
        os << "  rep movs/stos with a constant count:\n";
        for (std::size_t k = 0; k < std::min(top, sites.size()); ++k) {
            const RepSite& s = *sites[k].site;
            os << "    " << *sites[k].function << '+' << hex(s.offset) << ": " << s.insn
               << ", count " << s.count << " = " << s.bytes << " bytes"
               << (s.small() ? ", small\n" : "\n");
        }
        if (sites.size() > top) os << "    ... and " << sites.size() - top << " more\n";
    }
    for (const std::string& a : advice(r)) wrap(os, "  advice: ", a);
}

// JSON string literal; bytes that are not UTF-8 become \u00XX.
void json_string(std::ostream& os, std::string_view s) {
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

void json_counts(std::ostream& os, const Counts& c, const std::vector<Counter>& counters,
                 bool skip_zero) {
    os << "{\"insns\": " << c.insns;
    for (Counter k : counters)
        if (!skip_zero || c[k]) os << ", \"" << counter_name(k) << "\": " << c[k];
    if (!c.reps.empty()) {
        os << ", \"rep_const\": [";
        for (std::size_t i = 0; i < c.reps.size(); ++i) {
            const RepSite& s = c.reps[i];
            os << (i ? ", " : "") << "{\"insn\": \"" << s.insn << "\", \"offset\": " << s.offset
               << ", \"count\": " << s.count << ", \"bytes\": " << s.bytes
               << ", \"small\": " << (s.small() ? "true" : "false") << '}';
        }
        os << ']';
    }
    os << '}';
}

// The member name of "archive(member)", else the name.
std::string member_of(const std::string& name) {
    const auto open = name.rfind('(');
    if (open == std::string::npos || name.back() != ')') return name;
    return name.substr(open + 1, name.size() - open - 2);
}

struct Change {
    std::string function;
    Counter counter;
    std::uint64_t before, after;
};

}  // namespace

std::vector<std::string> advice(const ObjectReport& r) {
    std::vector<std::string> out;
    std::size_t small = 0;
    std::vector<std::string> small_in;
    for (const auto& [name, c] : r.functions) {
        const auto n = std::count_if(c.reps.begin(), c.reps.end(),
                                     [](const RepSite& s) { return s.small(); });
        small += static_cast<std::size_t>(n);
        if (n) small_in.push_back(name);
    }
    if (small) {
        out.push_back(
            std::to_string(small) + " rep movs/stos with a constant count below " +
            std::to_string(kSmallRepBytes) + " bytes (in " + some_names(small_in) +
            "): the compiler inlined a copy or clear as a string instruction, which starts "
            "slowly on CPUs without FSRM/FSRS. With gcc, build with "
            "-mmemcpy-strategy=unrolled_loop:256:noalign,libcall:-1:noalign "
            "-mmemset-strategy=unrolled_loop:256:noalign,libcall:-1:noalign (seed 001). "
            "uarch's preload library does not help here: inlined copies never call memcpy.");
    }
    if (r.totals[Counter::mfence]) {
        out.push_back(
            std::to_string(r.totals[Counter::mfence]) + " mfence (in " +
            some_names(functions_with(r, Counter::mfence)) +
            "): where it is a full barrier between ordinary loads and stores, uarch_smp_mb() "
            "from uarch.h does the same with a locked add below the red zone "
            "(lock addl $0,-132(%rsp)), which is much cheaper (seed 003). Keep mfence where "
            "it orders clflush or non-temporal stores.");
    }
    if (r.arch == Arch::x86_64 && r.built_by_clang) {
        std::uint64_t prefetches = 0;
        for (Counter c : {Counter::prefetcht0, Counter::prefetcht1, Counter::prefetcht2,
                          Counter::prefetchnta, Counter::prefetchw})
            prefetches += r.totals[c];
        if (prefetches == 0)
            out.push_back(
                "no prefetch instruction in code built by clang: clang drops "
                "__builtin_prefetch without a warning when it builds with -mno-sse (seed "
                "000). uarch_prefetch() from uarch.h is a prefetcht0 in inline asm that no "
                "compiler flag removes.");
    }
    return out;
}

void print_text(std::ostream& os, const std::vector<ObjectReport>& reports, std::size_t top) {
    // Among several objects (an archive's members), those with nothing to
    // show get one line together.
    std::vector<std::string> quiet;
    bool first = true;
    for (const ObjectReport& r : reports) {
        if (reports.size() > 1 && r.totals.flagged() == 0 && advice(r).empty()) {
            quiet.push_back(r.name);
            continue;
        }
        if (!first) os << '\n';
        first = false;
        print_object(os, r, top);
    }
    if (reports.size() > 1) {
        if (!quiet.empty())
            os << (first ? "" : "\n") << quiet.size()
               << " objects without counted instructions: " << some_names(quiet) << '\n';
        Counts all;
        for (const auto& r : reports) all.add(r.totals);
        os << "\nall " << reports.size() << " objects: " << all.insns << " instructions\n";
        print_totals(os, all, counters_of(reports));
    }
}

void print_json(std::ostream& os, const std::vector<ObjectReport>& reports) {
    Counts all;
    std::set<std::string> used;
    os << "{\n  \"files\": {";
    for (std::size_t k = 0; k < reports.size(); ++k) {
        const ObjectReport& r = reports[k];
        all.add(r.totals);
        std::string key = r.name;
        for (int n = 2; !used.insert(key).second; ++n) key = r.name + " #" + std::to_string(n);
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
        for (const auto& [name, c] : r.functions) {
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

void print_diff(std::ostream& os, const std::string& before_name,
                const std::vector<ObjectReport>& before, const std::string& after_name,
                const std::vector<ObjectReport>& after, bool json) {
    // Pair the objects: one with one, else archive members by name.
    std::vector<std::pair<const ObjectReport*, const ObjectReport*>> pairs;
    if (before.size() == 1 && after.size() == 1) {
        pairs.emplace_back(&before[0], &after[0]);
    } else {
        for (const auto& b : before) {
            const auto a = std::find_if(after.begin(), after.end(), [&](const ObjectReport& x) {
                return member_of(x.name) == member_of(b.name);
            });
            pairs.emplace_back(&b, a == after.end() ? nullptr : &*a);
        }
        for (const auto& a : after)
            if (std::none_of(before.begin(), before.end(), [&](const ObjectReport& x) {
                    return member_of(x.name) == member_of(a.name);
                }))
                pairs.emplace_back(nullptr, &a);
    }

    static const ObjectReport kEmpty{};
    if (json) {
        os << "{\n  \"before\": ";
        json_string(os, before_name);
        os << ",\n  \"after\": ";
        json_string(os, after_name);
        os << ",\n  \"objects\": [";
    } else {
        os << "before: " << before_name << "\nafter:  " << after_name << '\n';
    }
    for (std::size_t p = 0; p < pairs.size(); ++p) {
        const ObjectReport& ob = pairs[p].first ? *pairs[p].first : kEmpty;
        const ObjectReport& oa = pairs[p].second ? *pairs[p].second : kEmpty;
        const std::vector<Counter> counters =
            counters_of(std::vector<Arch>{(pairs[p].first ? ob : oa).arch,
                                          (pairs[p].second ? oa : ob).arch});
        std::set<std::string> names;
        for (const auto& f : ob.functions) names.insert(f.first);
        for (const auto& f : oa.functions) names.insert(f.first);
        std::vector<Change> changes;
        for (const std::string& name : names) {
            const auto fb = ob.functions.find(name);
            const auto fa = oa.functions.find(name);
            for (Counter c : counters) {
                const std::uint64_t x = fb == ob.functions.end() ? 0 : fb->second[c];
                const std::uint64_t y = fa == oa.functions.end() ? 0 : fa->second[c];
                if (x != y) changes.push_back({name, c, x, y});
            }
        }

        if (json) {
            os << (p ? ",\n    {" : "\n    {") << "\"before\": ";
            if (pairs[p].first) json_string(os, ob.name); else os << "null";
            os << ", \"after\": ";
            if (pairs[p].second) json_string(os, oa.name); else os << "null";
            os << ",\n     \"functions\": {";
            for (std::size_t k = 0; k < changes.size(); ++k) {
                const bool new_function = k == 0 || changes[k].function != changes[k - 1].function;
                if (new_function) {
                    os << (k ? "}, " : "");
                    json_string(os, changes[k].function);
                    os << ": {";
                } else {
                    os << ", ";
                }
                os << '"' << counter_name(changes[k].counter) << "\": [" << changes[k].before
                   << ", " << changes[k].after << ']';
            }
            os << (changes.empty() ? "}" : "}}") << ",\n     \"totals\": {\"insns\": ["
               << ob.totals.insns << ", " << oa.totals.insns << ']';
            for (Counter c : counters)
                os << ", \"" << counter_name(c) << "\": [" << ob.totals[c] << ", "
                   << oa.totals[c] << ']';
            os << "}}";
            continue;
        }

        if (pairs.size() > 1)
            os << "\n== " << (pairs[p].first ? member_of(ob.name) : "(none)") << " -> "
               << (pairs[p].second ? member_of(oa.name) : "(none)") << '\n';
        std::vector<Change> totals;
        if (ob.totals.insns != oa.totals.insns)
            totals.push_back({"", Counter::count_, ob.totals.insns, oa.totals.insns});
        for (Counter c : counters)
            if (ob.totals[c] != oa.totals[c]) totals.push_back({"", c, ob.totals[c], oa.totals[c]});
        std::size_t width = 8;
        for (const Change& ch : changes) width = std::max(width, std::min<std::size_t>(ch.function.size(), 48));
        const auto row = [&](std::string_view function, std::string_view counter,
                             std::uint64_t x, std::uint64_t y) {
            os << "  " << std::left << std::setw(static_cast<int>(width)) << function << "  "
               << std::setw(12) << counter << std::right << std::setw(8) << x << std::setw(8)
               << y << '\n';
        };
        if (changes.empty() && totals.empty()) {
            os << "  no counter changed\n";
            continue;
        }
        os << "  " << std::left << std::setw(static_cast<int>(width)) << "function" << "  "
           << std::setw(12) << "counter" << std::right << std::setw(8) << "before"
           << std::setw(8) << "after" << '\n';
        for (const Change& ch : changes)
            row(ch.function, counter_name(ch.counter), ch.before, ch.after);
        for (const Change& ch : totals)
            row("(total)", ch.counter == Counter::count_ ? "insns" : counter_name(ch.counter),
                ch.before, ch.after);
    }
    if (json) os << (pairs.empty() ? "]" : "\n  ]") << "\n}\n";
}

}  // namespace audit
