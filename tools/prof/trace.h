// Reading and writing traces (uarch-prof --trace; src/record/format.h),
// for uarch-prof and uarch-bench mem --trace.
#pragma once
#include <string>
#include <vector>
#include "record/format.h"

namespace uarch::prof {

// One process image's trace: its header and its complete records, oldest
// first. header.records and header.dropped are as read (records kept,
// calls less records kept).
struct TraceSection {
	TraceHeader header{};
	std::vector<TraceRecord> rec;
};

// Whether the file starts with a trace's magic.
bool is_trace(const std::string &path);
// Reads every section of a file (a recorder's, or uarch-prof's merge of
// them). A record out of its place (seq not increasing, or outside the
// calls the header says were kept) is dropped, as the format says. False
// with why on a bad file.
bool load_trace(const std::string &path, std::vector<TraceSection> *out, std::string *why);
// Writes the sections one after another, each header's records and
// dropped set from what it holds.
bool save_trace(const std::string &path, const std::vector<TraceSection> &s, std::string *why);

} // namespace uarch::prof

namespace uarch::prof {

// uarch-prof report of traces: what they hold, and what follows from the
// order of the calls, computed here, offline (record/format.h).
void report_trace(const std::vector<TraceSection> &secs, size_t nfiles);
// One line a record: section, seq, tid, entry, op, size, dst, src, gap.
void dump_trace(const std::vector<TraceSection> &secs);
// ns per call that recording added in the section (timed at its write).
double overhead_ns(const TraceHeader &h);

} // namespace uarch::prof
