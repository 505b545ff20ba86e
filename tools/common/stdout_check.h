// A tool's report that could not be written whole (a full disk, a closed
// file) is an error like any other: one line on stderr and exit status 2,
// not a short file and status 0. Checked once, at exit, on every path out
// of main: stdio keeps the first write error in ferror(stdout).
#pragma once
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

namespace uarch::tools {

inline const char *stdout_tool;

inline void stdout_check()
{
	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return;
	fprintf(stderr, "%s: cannot write standard output: %s\n", stdout_tool, errno ? strerror(errno) : "write error");
	_exit(2);
}

// Call first in main.
inline void check_stdout_at_exit(const char *tool)
{
	stdout_tool = tool;
	atexit(stdout_check);
}

} // namespace uarch::tools
