// Edits of the system profile's text that keep what they do not touch:
// uarch-tune --install replaces the entries for every process and keeps
// the per-program sections; --section NAME replaces (or, with no
// entries, removes) one section and keeps the rest. Pure string work,
// the file is read and written by uarch-tune.
#pragma once
#include <string>

namespace uarch::tune {

// NAME as the library accepts it in "[NAME]" (src/tunables/profile.h).
bool section_name_ok(const std::string &name);

// old with its lines before the first section replaced by global.
std::string with_global(const std::string &old, const std::string &global);

// old with section name's lines replaced by entries ("a=1:b=2", one a
// line), appended where there was none; removed where entries is empty.
std::string with_section(const std::string &old, const std::string &name, const std::string &entries);

} // namespace uarch::tune
