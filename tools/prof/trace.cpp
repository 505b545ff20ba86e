#include "trace.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <algorithm>

namespace uarch::prof {

namespace {

struct File {
	FILE *f;
	~File()
	{
		if (f)
			fclose(f);
	}
};

} // namespace

bool is_trace(const std::string &path)
{
	File f{fopen(path.c_str(), "rb")};
	char m[8];
	return f.f && fread(m, 1, 8, f.f) == 8 && !memcmp(m, "UARCHTRC", 8);
}

bool load_trace(const std::string &path, std::vector<TraceSection> *out, std::string *why)
{
	File f{fopen(path.c_str(), "rb")};
	if (!f.f) {
		*why = strerror(errno);
		return false;
	}
	out->clear();
	for (;;) {
		TraceHeader h;
		size_t got = fread(&h, 1, sizeof h, f.f);
		if (got == 0 && !out->empty())
			return true;
		if (got != sizeof h || memcmp(h.magic, "UARCHTRC", 8) != 0) {
			*why = out->empty() ? "not a uarch trace" : "truncated trace";
			return false;
		}
		if (h.version != trace_version) {
			*why = "trace version " + std::to_string(h.version) + ", this tool reads " + std::to_string(trace_version);
			return false;
		}
		if (h.header_bytes != sizeof(TraceHeader) || h.record_bytes != sizeof(TraceRecord) || h.keep > keep_last ||
		    !h.tick_hz || h.records > h.budget || h.records > h.calls || h.dropped > h.calls) {
			*why = "trace layout does not match this tool (or a corrupt header)";
			return false;
		}
		TraceSection s;
		s.rec.resize(h.records);
		if (h.records && fread(s.rec.data(), sizeof(TraceRecord), h.records, f.f) != h.records) {
			*why = "truncated trace";
			return false;
		}
		// The calls kept are seq first+1 .. calls (keep first: 1 .. records);
		// an address no process has (the top half) is a corrupt record.
		uint64_t lo = h.keep == keep_last ? h.calls - std::min(h.calls, h.budget) : 0, last = lo;
		uint64_t hi = h.keep == keep_last ? h.calls : std::min(h.calls, h.budget);
		size_t kept = 0;
		for (const TraceRecord &r : s.rec)
			if (r.seq > last && r.seq <= hi && r.entry < entry_count && r.dst < (uint64_t(1) << 63) &&
			    r.src < (uint64_t(1) << 63)) {
				s.rec[kept++] = r;
				last = r.seq;
			}
		s.rec.resize(kept);
		h.records = kept;
		h.dropped = h.calls - kept;
		s.header = h;
		out->push_back(std::move(s));
	}
}

bool save_trace(const std::string &path, const std::vector<TraceSection> &secs, std::string *why)
{
	FILE *f = fopen(path.c_str(), "wb");
	if (!f) {
		*why = strerror(errno);
		return false;
	}
	bool ok = true;
	for (const TraceSection &s : secs) {
		TraceHeader h = s.header;
		h.records = s.rec.size();
		h.dropped = h.calls - h.records;
		ok = ok && fwrite(&h, sizeof h, 1, f) == 1 &&
		     (s.rec.empty() || fwrite(s.rec.data(), sizeof(TraceRecord), s.rec.size(), f) == s.rec.size());
	}
	ok = (fclose(f) == 0) && ok;
	if (!ok)
		*why = strerror(errno);
	return ok;
}

} // namespace uarch::prof
