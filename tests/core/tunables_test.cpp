// The UARCH_TUNABLES parser: what it accepts, what it rejects and why.
#include <gtest/gtest.h>
#include <cstring>
#include <memory>
#include <random>
#include <vector>
#include <string>
#include "tunables/tunables.h"
#include "probe/cpu.h"

using namespace uarch;

namespace {

// The parser keeps pointers into its input: keep every input alive.
Tunables parse(const std::string &s)
{
	static std::vector<std::unique_ptr<std::string>> inputs;
	inputs.push_back(std::make_unique<std::string>(s));
	Tunables t;
	parse_tunables(inputs.back()->c_str(), s.size(), &t);
	return t;
}

std::string entry_text(const Tunables &t, const Entry &e)
{
	return std::string(t.input + e.offset, e.length);
}

TEST(Tunables, Empty)
{
	Tunables t = parse("");
	EXPECT_EQ(t.nentries, 0u);
	parse_tunables(nullptr, 0, &t);
	EXPECT_EQ(t.nentries, 0u);
	EXPECT_EQ(t.mask(), 0u);
}

TEST(Tunables, IssueExample)
{
	Tunables t = parse("memcpy=baseline:mask=-avx512,-fsrm:rep_movsb_threshold=4096");
	ASSERT_EQ(t.nentries, 3u);
	for (uint32_t i = 0; i < 3; i++)
		EXPECT_EQ(t.entries[i].verdict, Verdict::applied) << i;
	const Entry *e = t.find(Key::memcpy);
	ASSERT_NE(e, nullptr);
	EXPECT_EQ(std::string(t.input + e->value_offset, e->value_length), "baseline");
	EXPECT_EQ(t.mask(), (1ull << f_avx512f) | (1ull << f_avx512bw) | (1ull << f_avx512vl) |
			     (1ull << f_avx512fp16) | (1ull << f_fsrm));
	ASSERT_NE(t.find(Key::rep_movsb_threshold), nullptr);
	EXPECT_EQ(t.find(Key::rep_movsb_threshold)->number, 4096u);
}

TEST(Tunables, Numbers)
{
	struct { const char *v; bool ok; uint64_t n; } cases[] = {
		{"0", true, 0}, {"4096", true, 4096}, {"0x1000", true, 4096}, {"4K", true, 4096},
		{"4k", true, 4096}, {"64M", true, 64u << 20}, {"1G", true, 1u << 30},
		{"281474976710656", true, 1ull << 48}, {"281474976710657", false, 0},
		{"", false, 0}, {"-1", false, 0}, {"4KB", false, 0}, {"0x", false, 0}, {"12x", false, 0},
		{"99999999999999999999999", false, 0}, {"262145G", false, 0}, {"262144G", true, 1ull << 48}, {"262143G", true, 262143ull << 30},
		{"inf", true, 1ull << 48}, {"Inf", false, 0}, {"infinity", false, 0},
		{" 1", false, 0},
	};
	for (const char *key : {"nt_threshold=", "nt_fill_threshold="})
		for (const auto &c : cases) {
			Tunables t = parse(std::string(key) + c.v);
			ASSERT_EQ(t.nentries, 1u) << key << c.v;
			EXPECT_EQ(t.entries[0].verdict == Verdict::applied, c.ok) << key << c.v;
			if (c.ok)
				EXPECT_EQ(t.entries[0].number, c.n) << key << c.v;
			else
				EXPECT_EQ(t.entries[0].verdict, Verdict::bad_value) << key << c.v;
		}
}

TEST(Tunables, Masks)
{
	EXPECT_EQ(parse("mask=-erms").mask(), 1ull << f_erms);
	EXPECT_EQ(parse("mask=-erms:mask=-fsrm").mask(), (1ull << f_erms) | (1ull << f_fsrm));
	for (const char *bad : {"mask=+avx2", "mask=avx2", "mask=-", "mask=-avx2,", "mask=-nosuch", "mask=", "mask=,-avx2"}) {
		Tunables t = parse(bad);
		ASSERT_EQ(t.nentries, 1u) << bad;
		EXPECT_EQ(t.entries[0].verdict, Verdict::bad_value) << bad;
		EXPECT_EQ(t.mask(), 0u) << bad;
	}
}

TEST(Tunables, RejectedEntriesAreIgnoredWhole)
{
	Tunables t = parse("nosuch=1:memcpy:memset=avx2:=3:memcpy=Bad!:idle_c01=2:idle_c01=1");
	ASSERT_EQ(t.nentries, 7u);
	EXPECT_EQ(t.entries[0].verdict, Verdict::unknown_key);
	EXPECT_EQ(entry_text(t, t.entries[0]), "nosuch=1");
	EXPECT_EQ(t.entries[1].verdict, Verdict::no_equals);
	EXPECT_EQ(t.entries[2].verdict, Verdict::applied);
	EXPECT_EQ(t.entries[3].verdict, Verdict::unknown_key);
	EXPECT_EQ(t.entries[4].verdict, Verdict::bad_value);
	EXPECT_EQ(t.entries[5].verdict, Verdict::bad_value);
	EXPECT_EQ(t.entries[6].verdict, Verdict::applied);
	EXPECT_EQ(t.find(Key::memcpy), nullptr);
	EXPECT_EQ(t.find(Key::idle_c01)->number, 1u);
}

TEST(Tunables, RepeatedKeysLaterWins)
{
	Tunables t = parse("memcpy=avx2:memcpy=baseline");
	ASSERT_EQ(t.nentries, 2u);
	EXPECT_EQ(t.entries[0].verdict, Verdict::overridden);
	EXPECT_EQ(t.entries[1].verdict, Verdict::applied);
	EXPECT_EQ(std::string(t.input + t.find(Key::memcpy)->value_offset, 8), "baseline");
}

TEST(Tunables, EmptyEntries)
{
	Tunables t = parse("::memcpy=avx2:");
	ASSERT_EQ(t.nentries, 3u);
	EXPECT_EQ(t.entries[0].verdict, Verdict::empty);
	EXPECT_EQ(t.entries[1].verdict, Verdict::empty);
	EXPECT_EQ(t.entries[2].verdict, Verdict::applied);
}

TEST(Tunables, BoundedEntries)
{
	std::string s;
	for (int i = 0; i < 100; i++)
		s += "idle_spin_ns=" + std::to_string(i) + ":";
	Tunables t = parse(s);
	EXPECT_EQ(t.nentries, Tunables::max_entries);
	EXPECT_EQ(t.ndropped, 100 - Tunables::max_entries);
	// Only one applied: each later one overrides the earlier.
	int applied = 0;
	for (uint32_t i = 0; i < t.nentries; i++)
		applied += t.entries[i].verdict == Verdict::applied;
	EXPECT_EQ(applied, 1);
}

TEST(Tunables, TruncatedInputIsReported)
{
	std::string s(Tunables::max_input + 100, 'a');
	Tunables t = parse(s);
	EXPECT_EQ(t.input_length, Tunables::max_input);
	ASSERT_GE(t.nentries, 1u);
	EXPECT_EQ(t.entries[t.nentries - 1].verdict, Verdict::truncated);
	// Exactly max_input bytes is not truncated.
	t = parse(std::string(Tunables::max_input, 'a'));
	EXPECT_NE(t.entries[t.nentries - 1].verdict, Verdict::truncated);
}

// An entry that the limit cuts is not applied with its cut value: it is
// part of what the truncation entry reports, from its start. An entry
// that ends just at the limit is whole.
TEST(Tunables, EntryCutAtTheLimitIsNotApplied)
{
	const std::string tail = "nt_threshold=1234567";
	std::string pad = "x=" + std::string(Tunables::max_input - 2 - 1 - 15, 'a') + ":";
	Tunables t = parse(pad + tail);   // the limit falls after "nt_threshold=12"
	ASSERT_GE(t.nentries, 2u);
	EXPECT_EQ(t.find(Key::nt_threshold), nullptr);
	EXPECT_EQ(t.entries[t.nentries - 1].verdict, Verdict::truncated);
	EXPECT_EQ(t.entries[t.nentries - 1].offset, pad.size());
	// The limit right after a whole entry, at its ':': that entry applies.
	std::string whole = std::string(Tunables::max_input - tail.size() - 1, 'a');
	whole = "y" + whole.substr(1) + ":" + tail + ":memcpy=baseline";
	ASSERT_EQ(whole.find(":memcpy"), Tunables::max_input);
	t = parse(whole);
	ASSERT_NE(t.find(Key::nt_threshold), nullptr);
	EXPECT_EQ(t.find(Key::nt_threshold)->number, 1234567u);
	EXPECT_EQ(t.entries[t.nentries - 1].verdict, Verdict::truncated);
}

// Input cut with every slot taken: the truncation entry has its own slot,
// so the 32nd entry is dropped as one too many (counted, overriding
// nothing) and the earlier entry for its key still applies; no applied
// entry is overwritten.
TEST(Tunables, TruncationWithEverySlotTaken)
{
	std::string s = "nt_threshold=5";
	for (int i = 1; i <= 30; i++)
		s += ":a=" + std::to_string(i);
	s += ":nt_threshold=999:b=" + std::string(17000, 'b');
	Tunables t = parse(s);
	EXPECT_EQ(t.nentries, Tunables::max_entries);
	EXPECT_EQ(t.ndropped, 1u);
	EXPECT_EQ(t.entries[t.nentries - 1].verdict, Verdict::truncated);
	const Entry *e = t.find(Key::nt_threshold);
	ASSERT_NE(e, nullptr);
	EXPECT_EQ(e->number, 5u);
}

TEST(Tunables, StopsAtNul)
{
	const char s[] = "memcpy=avx2\0memset=avx2";
	Tunables t;
	parse_tunables(s, sizeof s - 1, &t);
	EXPECT_EQ(t.nentries, 1u);
}

// Tens of kilobytes of random bytes: never crashes, never reads past the
// bound, every entry is accounted for.
TEST(Tunables, Garbage)
{
	std::mt19937_64 rng(12345);
	for (int round = 0; round < 200; round++) {
		std::string s(size_t(rng() % 40000), '\0');
		for (char &c : s) {
			uint64_t r = rng() % 10;
			c = r < 3 ? ':' : r < 5 ? '=' : char(rng() % 256);
		}
		Tunables t;
		parse_tunables(s.data(), s.size(), &t);
		EXPECT_LE(t.nentries, Tunables::max_entries);
		EXPECT_LE(t.input_length, Tunables::max_input);
		for (uint32_t i = 0; i < t.nentries; i++)
			EXPECT_LE(t.entries[i].offset + t.entries[i].length, t.input_length);
	}
}

} // namespace
