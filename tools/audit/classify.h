// uarch-audit: disassembly and classification.
//
// Every instruction of an ElfObject's code is decoded with capstone and
// counted against the function that holds it. The counters are the
// instructions the seeds are about: rep movs/stos (seed 001), fences and
// locked operations on the stack (seed 003), prefetches (seeds 000, 002),
// wait and pause instructions (seed 004), and their arm64 counterparts.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "elf_reader.h"

namespace audit {

enum class Counter : std::uint8_t {
	// x86-64
	rep_movsb, rep_movsw, rep_movsd, rep_movsq,
	rep_stosb, rep_stosw, rep_stosd, rep_stosq,
	rep_small,  // of those, with a constant count below kSmallRepBytes
	mfence, lfence, sfence,
	lock_stack, // lock-prefixed operation whose memory operand is based on rsp
	prefetcht0, prefetcht1, prefetcht2, prefetchnta, prefetchw,
	pause, umwait, tpause, mwaitx,
	no_vzeroupper, // a ret or tail jmp after a ymm/zmm0-15 write, no vzeroupper between
	// aarch64
	prfm,     // prfm and prfum
	dmb, dsb, wfe, yield,
	mops_cpy, // every CPY*P/M/E instruction (a copy is a P, M, E triple)
	mops_set, // every SET*P/M/E instruction
	count_
};

inline constexpr std::size_t kNumCounters = static_cast<std::size_t>(Counter::count_);

inline constexpr std::array<std::string_view, kNumCounters> kCounterNames{
	"rep_movsb",  "rep_movsw",  "rep_movsd",  "rep_movsq",
	"rep_stosb",  "rep_stosw",  "rep_stosd",  "rep_stosq",
	"rep_small",
	"mfence",     "lfence",     "sfence",
	"lock_stack",
	"prefetcht0", "prefetcht1", "prefetcht2", "prefetchnta", "prefetchw",
	"pause",      "umwait",     "tpause",     "mwaitx",
	"no_vzeroupper",
	"prfm",
	"dmb",        "dsb",        "wfe",        "yield",
	"mops_cpy",
	"mops_set"};
static_assert(!kCounterNames.back().empty(), "a name for every counter");

// A rep movs/stos below this many bytes pays the start-up cost of the
// string instruction for less work than a few plain moves (seed 001).
inline constexpr std::uint64_t kSmallRepBytes = 256;

constexpr std::string_view counter_name(Counter c)
{
	return kCounterNames[static_cast<std::size_t>(c)];
}

// The counters that can be non-zero for code of this architecture, in order.
std::span<const Counter> counters_for(Arch a);

// A rep movs/stos whose count register was loaded with a constant shortly before.
struct RepSite {
	std::string insn;         // "rep movsq"
	std::uint64_t offset = 0; // from the start of its function (or section, for [.text])
	std::uint64_t count = 0;  // rcx
	std::uint64_t bytes = 0;  // count * element size
	bool small() const { return bytes < kSmallRepBytes; }
};

struct Counts {
	std::uint64_t insns = 0;
	std::array<std::uint64_t, kNumCounters> n{};
	std::vector<RepSite> reps;

	std::uint64_t &operator[](Counter c) { return n[static_cast<std::size_t>(c)]; }
	std::uint64_t operator[](Counter c) const { return n[static_cast<std::size_t>(c)]; }
	// All counted instructions; rep_small is not counted twice.
	std::uint64_t flagged() const;
	// Adds o's instruction and counter totals (not its rep sites).
	void add(const Counts &o);
};

struct ObjectReport {
	std::string name;
	Arch arch = Arch::x86_64;
	std::string type;
	bool built_by_clang = false;
	std::map<std::string, Counts> functions; // "[.text]" etc. for code outside any function
	Counts totals;
};

// Decodes all code of obj. Never fails on undecodable bytes: they are skipped.
ObjectReport classify(const ElfObject &obj);

} // namespace audit
