// The tools' plots: whether one can be drawn (checked before measuring, so
// that a missing gnuplot or an unwritable FILE.png is a line at the start
// and not an error after the run, with its results unprinted), and drawing
// it (draw_plot).
#pragma once
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdio.h>
#include <functional>
#include <string>
#include "common/can_write.h"

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
	if (png.find('\n') != std::string::npos) {
		*why = "--plot: a file name with a line break";
		return false;
	}
	if (!on_path("gnuplot")) {
		*why = "--plot needs gnuplot, which is not on PATH";
		return false;
	}
	return can_write(png, why);
}

// s as a gnuplot string in single quotes, where only a quote is special
// (written twice). File names and titles go into scripts only so: a name
// with a quote in it is a name, not a command.
inline std::string gp_quote(const std::string &s)
{
	std::string out = "'";
	for (char c : s) {
		if (c == '\n')
			continue;
		out += c;
		if (c == '\'')
			out += '\'';
	}
	return out + "'";
}

// Draws png: make_script(dir, out) writes any data files into the private
// directory dir and returns the gnuplot script, which must write its plot
// to out (quoted with gp_quote). gnuplot runs with no shell and its own
// messages discarded; only a plot it finished replaces png, so a failure
// leaves an existing png as it was. false and *why (one line) on failure.
inline bool draw_plot(const std::string &png,
		      const std::function<std::string(const std::string &dir, const std::string &out)> &make_script,
		      std::string *why)
{
	const char *tmp = getenv("TMPDIR");
	std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/uarch-plot.XXXXXX";
	if (!mkdtemp(&templ[0])) {
		*why = "cannot make a temporary directory: " + std::string(strerror(errno));
		return false;
	}
	const std::string dir = templ, out = dir + "/plot.png", gp = dir + "/plot.gp";
	bool ok = false;
	std::string script = make_script(dir, out);
	if (FILE *f = fopen(gp.c_str(), "w")) {
		ok = fputs(script.c_str(), f) >= 0;
		ok = fclose(f) == 0 && ok;
	}
	if (ok) {
		pid_t pid = fork();
		if (pid == 0) {
			int null = open("/dev/null", O_RDWR);
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
			execlp("gnuplot", "gnuplot", gp.c_str(), (char *)nullptr);
			_exit(127);
		}
		int st = 0;
		ok = pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
		*why = "gnuplot failed";
	} else {
		*why = "cannot write " + gp;
	}
	if (ok) {   // copy, not rename: dir may be on another file system
		ok = false;
		FILE *in = fopen(out.c_str(), "rb"), *o = in ? fopen(png.c_str(), "wb") : nullptr;
		if (o) {
			char buf[65536];
			size_t n;
			ok = true;
			while ((n = fread(buf, 1, sizeof buf, in)) > 0)
				ok = fwrite(buf, 1, n, o) == n && ok;
			ok = fclose(o) == 0 && ok;
		}
		if (in)
			fclose(in);
		if (!ok)
			*why = "cannot write " + png + ": " + strerror(errno);
	}
	if (DIR *d = opendir(dir.c_str())) {
		while (dirent *e = readdir(d))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				unlink((dir + "/" + e->d_name).c_str());
		closedir(d);
	}
	rmdir(dir.c_str());
	return ok;
}

} // namespace uarch::tools
