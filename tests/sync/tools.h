// Helpers for the sync tests that run programs: the compilers and objdump
// that meson found (passed in as macros), a shell runner and a disassembly
// parser that counts instructions.
#pragma once
#include <cctype>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace sync_test {

inline std::string quote(const std::string &s)
{
	std::string r = "'";
	for (char c : s)
		r += c == '\'' ? std::string("'\\''") : std::string(1, c);
	return r + "'";
}

// Runs a shell command; returns its exit status, output (stdout + stderr) in *out.
inline int run(const std::string &cmd, std::string *out)
{
	out->clear();
	FILE *f = popen((cmd + " 2>&1").c_str(), "r");
	if (!f)
		return -1;
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		out->append(buf, n);
	return pclose(f);
}

// Instruction counts of a disassembly: "prefetcht0", "lock" (any locked
// op), "lock addl"; for arm64 the first operand joins prfm and dmb:
// "prfm pldl1keep", "dmb ish".
using Counts = std::map<std::string, int>;

inline std::vector<std::string> tokens(const std::string &s)
{
	std::vector<std::string> t;
	std::string cur;
	for (char c : s) {
		if (c == ' ' || c == '\t' || c == ',') {
			if (!cur.empty())
				t.push_back(cur), cur.clear();
		} else {
			cur += c;
		}
	}
	if (!cur.empty())
		t.push_back(cur);
	return t;
}

// One instruction line of objdump/llvm-objdump (--no-show-raw-insn):
// "   1c:\tlock addl $0x0,-0x84(%rsp)". Returns false for other lines.
inline bool count_line(const std::string &line, Counts *c)
{
	size_t i = 0;
	while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
		i++;
	size_t h = i;
	while (i < line.size() && isxdigit(static_cast<unsigned char>(line[i])))
		i++;
	if (i == h || i >= line.size() || line[i] != ':' || i + 1 >= line.size() ||
	    (line[i + 1] != '\t' && line[i + 1] != ' '))
		return false;
	std::vector<std::string> t = tokens(line.substr(i + 1));
	if (t.empty())
		return false;
	if (t[0] == "lock") {
		(*c)["lock"]++;
		if (t.size() > 1)
			(*c)["lock " + t[1]]++;
		return true;
	}
	(*c)[t[0]]++;
	if ((t[0] == "prfm" || t[0] == "dmb") && t.size() > 1)
		(*c)[t[0] + " " + t[1]]++;
	return true;
}

inline Counts count_all(const std::string &disasm)
{
	Counts c;
	size_t pos = 0;
	while (pos < disasm.size()) {
		size_t e = disasm.find('\n', pos);
		if (e == std::string::npos)
			e = disasm.size();
		count_line(disasm.substr(pos, e - pos), &c);
		pos = e + 1;
	}
	return c;
}

// Counts per function: "0000000000004dc0 <name>:" starts one.
inline std::map<std::string, Counts> count_by_symbol(const std::string &disasm)
{
	std::map<std::string, Counts> m;
	Counts *cur = nullptr;
	size_t pos = 0;
	while (pos < disasm.size()) {
		size_t e = disasm.find('\n', pos);
		if (e == std::string::npos)
			e = disasm.size();
		std::string line = disasm.substr(pos, e - pos);
		size_t lt = line.find(" <"), gt = line.rfind(">:");
		if (lt != std::string::npos && gt != std::string::npos && gt > lt && line[0] != ' ')
			cur = &m[line.substr(lt + 2, gt - lt - 2)];
		else if (cur)
			count_line(line, cur);
		pos = e + 1;
	}
	return m;
}

inline int get(const Counts &c, const std::string &k)
{
	auto it = c.find(k);
	return it == c.end() ? 0 : it->second;
}

inline std::string show(const Counts &c)
{
	std::string s;
	for (auto &[k, v] : c)
		s += k + "=" + std::to_string(v) + " ";
	return s;
}

} // namespace sync_test
