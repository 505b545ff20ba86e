// Whether the tools can draw a plot with gnuplot: checked before
// measuring, so that a missing gnuplot or an unwritable FILE.png is a line
// at the start and not an error after the run, with its results unprinted.
#pragma once
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stdio.h>
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

// gnuplot is on PATH and png can be written; else false and *why, one
// line. An existing png is left as it was (opened to append nothing).
inline bool can_plot(const std::string &png, std::string *why)
{
	if (!on_path("gnuplot")) {
		*why = "--plot needs gnuplot, which is not on PATH";
		return false;
	}
	bool existed = access(png.c_str(), F_OK) == 0;
	FILE *f = fopen(png.c_str(), "a");
	if (!f) {
		*why = "cannot write " + png + ": " + strerror(errno);
		return false;
	}
	fclose(f);
	if (!existed)
		unlink(png.c_str());
	return true;
}

} // namespace uarch::tools
