// The system profile: a file of UARCH_TUNABLES entries (written by
// uarch-tune --install) that every process reads at load. Read with raw
// system calls into fixed buffers: it runs inside ifunc resolvers.
//
// Format: the UARCH_TUNABLES syntax; newlines separate entries like ':',
// and a '#' starts a comment that runs to the end of its line. A line
// "[NAME]" starts a section: its entries apply only to processes whose
// executable's file name (the basename of AT_EXECFN) is NAME, after the
// entries before the first section, which apply to every process (so a
// section's entry overrides a global one). A section line that is not
// "[NAME]" (NAME: 1-63 characters, none of them blank, '/', ':', '=',
// '[', ']' or '#') goes to the parser as it is, which refuses and reports
// it, and the entries under it apply to no process. A set-id process
// (AT_SECURE) takes no section: the name is the invoker's choice.
//
// Rules: the last path component must not be a symlink (O_NOFOLLOW) and the
// file must be a regular file of at most max_bytes, writable by its owner
// alone, and owned by root or, outside AT_SECURE, by the process's
// effective user (a profile a user installed under a prefix of their own).
// Anyone else who can write it would set every reader's tunables. fstat of
// the opened file, so nothing can swap it between check and read. The
// environment's entries follow the profile's, so each of them overrides
// the profile's entry for the same key; under AT_SECURE the environment is
// not read at all.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "tunables/tunables.h"

namespace uarch {

// Where the libraries look; fixed at build time (meson option profile_path,
// default <prefix>/<sysconfdir>/uarch/tunables). Never from the environment.
extern const char profile_path[] __attribute__((visibility("hidden")));

enum class ProfileStatus : uint8_t {
	absent,        // no such file (or no profile path)
	applied,       // read
	unreadable,    // open or read failed (permissions, ...)
	symlink,       // the path is a symbolic link
	not_regular,   // a directory, FIFO, device...
	too_large,     // more than max_bytes
	untrusted,     // group/world-writable, or owned by neither root nor the process's user
};
const char *profile_status_text(ProfileStatus s);

constexpr uint32_t profile_section_max = 63;

struct ProfileInfo {
	ProfileStatus status;
	uint32_t length;   // bytes at the start of the tunables input that came from the profile
	char section[profile_section_max + 1];   // the section that applied ("": none)
};

constexpr uint32_t profile_max_bytes = 4096;

// The trust rule, apart so tests can feed it any owner and mode. own_uid:
// the process's effective user.
bool profile_trusted(uint32_t uid, uint32_t mode, bool secure, uint32_t own_uid);

// The file name of an executable path: what a section names.
const char *exe_name(const char *path);

// Reads and normalises the profile at path into buf (at least
// profile_max_bytes + 1 bytes), keeping the entries that apply to the
// executable named exe (nullptr: the global ones alone); returns its
// length, 0 unless *st is applied. section: the section that applied.
uint32_t read_profile(const char *path, bool secure, const char *exe, char *buf, ProfileStatus *st,
		      char (&section)[profile_section_max + 1]);

struct ProfileBuffers {
	char profile[profile_max_bytes + 2];
	char joined[Tunables::max_input + 2];
};

// Puts the profile read from path before the environment's value
// (*input, *len) in a buffer of its own and points *input there. The
// result keeps the environment's truncation visible to the parser.
// info->length: how much of the result is the profile's. b: where the
// profile and the joined input are kept (as long as the parsed tunables).
void prepend_profile(const char *path, bool secure, const char *exe, ProfileBuffers *b, const char **input,
		     size_t *len, ProfileInfo *info);

} // namespace uarch
