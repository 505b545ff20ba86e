// Whether a tool can write an output file, asked before the run so that a
// bad path is one line at the start, and asked without harm: an existing
// file is opened to append nothing, a new one is removed again, so that a
// run that fails later has destroyed nothing.
#pragma once
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <string>

namespace uarch::tools {

// true, or false and *why ("cannot write PATH: reason").
inline bool can_write(const std::string &path, std::string *why)
{
	bool existed = access(path.c_str(), F_OK) == 0;
	FILE *f = fopen(path.c_str(), "a");
	if (!f) {
		*why = "cannot write " + path + ": " + strerror(errno);
		return false;
	}
	fclose(f);
	if (!existed)
		unlink(path.c_str());
	return true;
}

} // namespace uarch::tools
