#include "profile.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

namespace uarch::prof {

namespace {

bool add_fits(uint64_t *sum, uint64_t v) { return !__builtin_add_overflow(*sum, v, sum); }

// Whether every total a reader forms from p fits in 64 bits: per op the
// calls (by size, by dst and src alignment, by overlap, by name) and the
// bytes, and the header's processes and threads. A recorded file always
// does (2^64 calls are centuries of calls); a crafted one, or many files
// merged, need not, and sums that wrap would report shares above 100% and
// replay sizes from a wrong total. (The totals need not agree with each
// other exactly: a thread still copying while the process exits may have
// counted a size and not yet its alignment.)
bool totals_fit(const Profile &p)
{
	uint64_t by_name = 0;
	for (uint32_t e = 0; e < entry_count; e++)
		if (!add_fits(&by_name, p.counts.entry[e]))
			return false;
	for (const OpCounts &o : p.counts.op) {
		uint64_t calls = 0, bytes = o.big_bytes, dst = 0, src = 0, ov = 0, b = 0;
		for (uint32_t i = 0; i < size_slots; i++)
			if (!add_fits(&calls, o.size[i]) ||
			    (i <= exact_max && (__builtin_mul_overflow(o.size[i], uint64_t(i), &b) || !add_fits(&bytes, b))))
				return false;
		for (int i = 0; i < 64; i++)
			if (!add_fits(&dst, o.dst_align[i]) || !add_fits(&src, o.src_align[i]))
				return false;
		for (uint64_t n : o.overlap)
			if (!add_fits(&ov, n))
				return false;
	}
	uint64_t calls = 0;
	for (uint32_t c = 0; c < cmp_count; c++)
		if (!add_fits(&calls, p.counts.cmp.calls[c]))
			return false;
	return true;
}

} // namespace

bool load(const std::string &path, Profile *out, std::string *why)
{
	FILE *f = fopen(path.c_str(), "rb");
	if (!f) {
		*why = strerror(errno);
		return false;
	}
	Header h;
	size_t got = fread(&h, 1, sizeof h, f);
	bool ok = false;
	// Version 1 lacks the last entry: its payload is read where the
	// entries end, then the operations moved up one entry. Versions 1 and
	// 2 lack the comparisons at the end (left 0).
	constexpr size_t v1_entries = (entry_count - 1) * sizeof(uint64_t);
	const size_t payload = sizeof(Counts) - (h.version < 3 ? sizeof(CmpCounts) : 0) - (h.version == 1 ? sizeof(uint64_t) : 0);
	unsigned char *raw = reinterpret_cast<unsigned char *>(&out->counts);
	memset(raw, 0, sizeof(Counts));
	if (got != sizeof h || memcmp(h.magic, "UARCHPRF", 8) != 0)
		*why = "not a uarch profile";
	else if (h.version < 1 || h.version > version)
		*why = "profile version " + std::to_string(h.version) + ", this tool reads 1 to " + std::to_string(version);
	else if (h.header_bytes != sizeof(Header) || h.payload_bytes != payload)
		*why = "profile layout does not match this tool";
	else if (fread(raw, 1, payload, f) != payload)
		*why = "truncated profile";
	else if (fgetc(f) != EOF)
		*why = "trailing bytes after the profile";
	else if (fnv1a(raw, payload) != h.checksum)
		*why = "checksum mismatch (corrupt profile)";
	else
		ok = true;
	fclose(f);
	if (ok && h.version == 1) {
		memmove(raw + sizeof out->counts.entry, raw + v1_entries, payload - v1_entries);
		out->counts.entry[entry_count - 1] = 0;
	}
	if (ok) {
		h.version = version;
		h.payload_bytes = sizeof(Counts);
	}
	if (ok)
		out->header = h;
	if (ok && !totals_fit(*out)) {
		*why = "counts whose totals overflow 64 bits (corrupt profile)";
		ok = false;
	}
	return ok;
}

bool merge(Profile *a, const Profile &b)
{
	Profile sum = *a;
	uint64_t *x = reinterpret_cast<uint64_t *>(&sum.counts);
	const uint64_t *y = reinterpret_cast<const uint64_t *>(&b.counts);
	for (size_t i = 0; i < sizeof(Counts) / sizeof(uint64_t); i++)
		if (!add_fits(&x[i], y[i]))
			return false;
	if (!add_fits(&sum.header.processes, b.header.processes) || !add_fits(&sum.header.threads, b.header.threads) ||
	    !totals_fit(sum))
		return false;
	*a = sum;
	return true;
}

bool save(const std::string &path, const Profile &p, std::string *why)
{
	Header h = p.header;
	memcpy(h.magic, "UARCHPRF", 8);
	h.version = version;
	h.header_bytes = sizeof(Header);
	h.payload_bytes = sizeof(Counts);
	h.checksum = fnv1a(&p.counts, sizeof(Counts));
	FILE *f = fopen(path.c_str(), "wb");
	if (!f) {
		*why = strerror(errno);
		return false;
	}
	bool ok = fwrite(&h, sizeof h, 1, f) == 1 && fwrite(&p.counts, sizeof(Counts), 1, f) == 1;
	ok = (fclose(f) == 0) && ok;
	if (!ok)
		*why = strerror(errno);
	return ok;
}

const char *entry_name(uint32_t e)
{
	static const char *const names[entry_count] = {
#define UARCH_LIBC_NAME(name, op, form) #name,
#include "table/libc_names.def"
#undef UARCH_LIBC_NAME
	};
	return e < entry_count ? names[e] : "?";
}

const char *cmp_name(uint32_t c)
{
	static const char *const names[cmp_count] = {"memcmp", "bcmp", "strlen", "strcmp"};
	return c < cmp_count ? names[c] : "?";
}

const char *op_name(uint32_t op)
{
	static const char *const names[p_op_count] = {"memcpy", "memmove", "memset"};
	return op < p_op_count ? names[op] : "?";
}

uint32_t entry_op(uint32_t e)
{
	return e < e_memmove ? p_memcpy : e < e_memset ? p_memmove : p_memset;
}

uint64_t slot_lo(uint32_t slot)
{
	if (slot <= exact_max)
		return slot;
	uint32_t b = slot - exact_max - 1;
	uint64_t lo = uint64_t(1) << b;
	return lo <= exact_max ? exact_max + 1 : lo;
}

uint64_t slot_hi(uint32_t slot)
{
	if (slot <= exact_max)
		return slot;
	uint32_t b = slot - exact_max - 1;
	return b >= 63 ? ~uint64_t(0) : (uint64_t(2) << b) - 1;
}

} // namespace uarch::prof
