#include "profile.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

namespace uarch::prof {

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
	if (got != sizeof h || memcmp(h.magic, "UARCHPRF", 8) != 0)
		*why = "not a uarch profile";
	else if (h.version != version)
		*why = "profile version " + std::to_string(h.version) + ", this tool reads " + std::to_string(version);
	else if (h.header_bytes != sizeof(Header) || h.payload_bytes != sizeof(Counts))
		*why = "profile layout does not match this tool";
	else if (fread(&out->counts, 1, sizeof(Counts), f) != sizeof(Counts))
		*why = "truncated profile";
	else if (fgetc(f) != EOF)
		*why = "trailing bytes after the profile";
	else if (fnv1a(&out->counts, sizeof(Counts)) != h.checksum)
		*why = "checksum mismatch (corrupt profile)";
	else
		ok = true;
	fclose(f);
	if (ok)
		out->header = h;
	return ok;
}

void merge(Profile *a, const Profile &b)
{
	uint64_t *x = reinterpret_cast<uint64_t *>(&a->counts);
	const uint64_t *y = reinterpret_cast<const uint64_t *>(&b.counts);
	for (size_t i = 0; i < sizeof(Counts) / sizeof(uint64_t); i++)
		x[i] += y[i];
	a->header.processes += b.header.processes;
	a->header.threads += b.header.threads;
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
		"memcpy", "mempcpy", "__mempcpy", "__memcpy_chk", "__mempcpy_chk",
		"memmove", "__memmove_chk",
		"memset", "bzero", "explicit_bzero", "__memset_chk"};
	return e < entry_count ? names[e] : "?";
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
