// The system profile reader. Runs inside ifunc resolvers: raw system
// calls, fixed hidden buffers, no libc.
#include "tunables/profile.h"
#include "sys/sys.h"
#include "tunables/tunables.h"

namespace uarch {

static const char status_texts[7][64] = {
	"absent", "applied", "unreadable", "a symbolic link: refused", "not a regular file: refused",
	"larger than 4096 bytes: ignored", "writable by others, or not root's nor this user's: refused",
};

const char *profile_status_text(ProfileStatus s) { return status_texts[uint32_t(s) < 7 ? uint32_t(s) : 0]; }

namespace {

using sys::nr_fstat, sys::o_nofollow, sys::stat_off_mode, sys::stat_off_uid, sys::stat_off_size;
constexpr long o_nonblock = 04000;   // a FIFO put there must not hang the loader
constexpr long eloop = 40, enoent = 2, enotdir = 20;
constexpr uint32_t s_ifmt = 0170000, s_ifreg = 0100000;

uint32_t load32(const unsigned char *p, uint32_t off)
{
	return uint32_t(p[off]) | uint32_t(p[off + 1]) << 8 | uint32_t(p[off + 2]) << 16 | uint32_t(p[off + 3]) << 24;
}

bool blank(char c) { return c == ' ' || c == '\t'; }

// The length of NAME where line (n bytes, from its '[') is "[NAME]",
// optionally followed by blanks and a comment; 0 where it is not.
uint32_t section_name(const char *line, uint32_t n)
{
	uint32_t k = 1;
	for (; k < n && line[k] != ']'; k++) {
		const char c = line[k];
		if (blank(c) || c == '/' || c == ':' || c == '=' || c == '[' || c == '#' || c == 0)
			return 0;
	}
	const uint32_t len = k - 1;
	if (k == n || len == 0 || len > profile_section_max)
		return 0;
	for (k++; k < n && blank(line[k]); k++)
		;
	return k == n || line[k] == '#' ? len : 0;
}

bool names(const char *name, uint32_t len, const char *exe)
{
	uint32_t i = 0;
	while (i < len && exe[i] == name[i])
		i++;
	return i == len && exe[i] == 0;
}

// The entries that apply to exe, comments dropped, line ends turned into
// ':', runs of separators and surrounding ones removed: "a=1\n# x\nb=2\n"
// -> "a=1:b=2". In place: what is kept never moves forward.
uint32_t normalise(char *b, uint32_t n, const char *exe, char (&section)[profile_section_max + 1])
{
	uint32_t k = 0;
	bool applies = true;   // the entries before any section: every process's
	section[0] = 0;
	auto put = [&](char c) {
		if (c == 0)
			c = ':';   // a NUL would end the parser's input early
		if (c == ':' && (k == 0 || b[k - 1] == ':'))
			return;
		b[k++] = c;
	};
	for (uint32_t i = 0; i < n;) {
		uint32_t end = i;
		while (end < n && b[end] != '\n' && b[end] != '\r')
			end++;
		uint32_t first = i;
		while (first < end && blank(b[first]))
			first++;
		bool copy = applies;
		if (first < end && b[first] == '[') {
			const uint32_t len = section_name(b + first, end - first);
			applies = len && exe && names(b + first + 1, len, exe);
			if (applies) {
				for (uint32_t j = 0; j < len; j++)
					section[j] = b[first + 1 + j];
				section[len] = 0;
			}
			copy = len == 0;   // refused: the parser names it
		}
		for (uint32_t j = first; copy && j < end && b[j] != '#'; j++)   // indentation dropped
			put(b[j]);
		put(':');
		i = end + 1;
	}
	while (k && b[k - 1] == ':')
		k--;
	b[k] = 0;
	return k;
}

} // namespace

bool profile_trusted(uint32_t uid, uint32_t mode, bool secure, uint32_t own_uid)
{
	if ((mode & s_ifmt) != s_ifreg || (mode & 022))
		return false;
	return uid == 0 || (!secure && uid == own_uid);
}

const char *exe_name(const char *path)
{
	if (!path)
		return nullptr;
	const char *name = path;
	for (const char *p = path; *p; p++)
		if (*p == '/')
			name = p + 1;
	return name;
}

uint32_t read_profile(const char *path, bool secure, const char *exe, char *buf, ProfileStatus *st,
		      char (&section)[profile_section_max + 1])
{
	section[0] = 0;
	*st = ProfileStatus::absent;
	if (!path || !path[0])
		return 0;
	long fd = sys::call6(sys::nr_openat, sys::at_fdcwd, long(path),
			     sys::o_rdonly_cloexec | o_nofollow | o_nonblock);
	if (fd < 0) {
		*st = fd == -eloop ? ProfileStatus::symlink
		      : (fd == -enoent || fd == -enotdir) ? ProfileStatus::absent : ProfileStatus::unreadable;
		return 0;
	}
	uint64_t statbuf[32];   // larger than either architecture's struct stat
	const unsigned char *sb = reinterpret_cast<const unsigned char *>(statbuf);
	uint32_t n = 0;
	if (sys::call6(nr_fstat, fd, long(statbuf)) != 0) {
		*st = ProfileStatus::unreadable;
	} else if ((load32(sb, stat_off_mode) & s_ifmt) != s_ifreg) {
		*st = ProfileStatus::not_regular;
	} else if (!profile_trusted(load32(sb, stat_off_uid), load32(sb, stat_off_mode), secure,
				    uint32_t(sys::call6(sys::nr_geteuid)))) {
		*st = ProfileStatus::untrusted;
	} else if (load32(sb, stat_off_size) > profile_max_bytes || load32(sb, stat_off_size + 4) != 0) {
		*st = ProfileStatus::too_large;
	} else {
		*st = ProfileStatus::applied;
		// The size may change under us: read to EOF, at most one byte past the limit.
		for (;;) {
			long r = sys::read(fd, buf + n, profile_max_bytes + 1 - n);
			if (r < 0) {
				*st = ProfileStatus::unreadable;
				break;
			}
			if (r == 0)
				break;
			n += uint32_t(r);
			if (n > profile_max_bytes) {
				*st = ProfileStatus::too_large;
				break;
			}
		}
	}
	sys::close(fd);
	if (*st != ProfileStatus::applied)
		return 0;
	return normalise(buf, n, exe, section);
}

void prepend_profile(const char *path, bool secure, const char *exe, ProfileBuffers *b, const char **input,
		     size_t *len, ProfileInfo *info)
{
	char *const g_profile = b->profile, *const g_joined = b->joined;
	info->length = 0;
	uint32_t plen = read_profile(path, secure, exe, g_profile, &info->status, info->section);
	if (plen == 0)
		return;
	// "profile:env". The environment's value is at most max_input + 1
	// bytes (one past the limit marks truncation); whatever of it does
	// not fit is cut, and the parser then reports the input as truncated.
	size_t k = 0;
	for (uint32_t i = 0; i < plen && k < Tunables::max_input; i++)
		g_joined[k++] = g_profile[i];
	info->length = uint32_t(k);
	const char *env = *input;
	if (env && *len) {
		g_joined[k++] = ':';
		for (size_t i = 0; i < *len && env[i] && k < Tunables::max_input + 1; i++)
			g_joined[k++] = env[i];
	}
	g_joined[k] = 0;
	*input = g_joined;
	*len = k;
}

} // namespace uarch
