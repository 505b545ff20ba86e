// Whether a program the tools hand work to (gnuplot) can be run: checked
// before measuring, so that a missing one is a line at the start and not
// an error after the run, with its results unprinted.
#pragma once
#include <stdlib.h>
#include <unistd.h>
#include <string>

namespace uarch::tools {

// An executable `prog` in a directory of PATH, as the shell behind popen()
// and system() looks for it (an empty entry is the current directory).
inline bool on_path(const char *prog)
{
	const char *env = getenv("PATH");
	std::string path = env ? env : "/usr/bin:/bin";
	for (size_t start = 0; start <= path.size();) {
		size_t end = path.find(':', start);
		if (end == std::string::npos)
			end = path.size();
		std::string dir = end > start ? path.substr(start, end - start) : ".";
		if (access((dir + "/" + prog).c_str(), X_OK) == 0)
			return true;
		start = end + 1;
	}
	return false;
}

} // namespace uarch::tools
