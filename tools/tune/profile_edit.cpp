#include "profile_edit.h"
#include <vector>

namespace uarch::tune {

namespace {

struct Block {
	std::string name;   // "" for the lines before the first section
	std::string text;   // its lines, the header included, each ending in '\n'
};

// A line whose first non-blank character is '[' starts a block (the
// library's rule: a malformed one starts a section that applies nowhere,
// kept here as it is).
std::string header_name(const std::string &line)
{
	size_t i = line.find_first_not_of(" \t");
	if (i == std::string::npos || line[i] != '[')
		return {};
	size_t end = line.find(']', i);
	return end == std::string::npos ? line.substr(i) : line.substr(i + 1, end - i - 1);
}

std::vector<Block> blocks(const std::string &text)
{
	std::vector<Block> out{{"", ""}};
	for (size_t at = 0; at < text.size();) {
		size_t nl = text.find('\n', at);
		std::string line = text.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
		at = nl == std::string::npos ? text.size() : nl + 1;
		std::string name = header_name(line);
		if (!name.empty())
			out.push_back({name, ""});
		out.back().text += line + "\n";
	}
	return out;
}

std::string joined(const std::vector<Block> &bs)
{
	std::string s;
	for (const Block &b : bs)
		s += b.text;
	return s;
}

} // namespace

bool section_name_ok(const std::string &name)
{
	if (name.empty() || name.size() > 63)
		return false;
	for (char c : name)
		if (c == ' ' || c == '\t' || c == '/' || c == ':' || c == '=' || c == '[' || c == ']' || c == '#' ||
		    c == '\n' || c == '\r' || c == 0)
			return false;
	return true;
}

std::string with_global(const std::string &old, const std::string &global)
{
	std::vector<Block> bs = blocks(old);
	bs[0].text = global.empty() || global.back() == '\n' ? global : global + "\n";
	return joined(bs);
}

std::string with_section(const std::string &old, const std::string &name, const std::string &entries)
{
	std::string body = "[" + name + "]\n";
	for (size_t at = 0; at <= entries.size();) {
		size_t c = entries.find(':', at);
		std::string e = entries.substr(at, c == std::string::npos ? std::string::npos : c - at);
		if (!e.empty())
			body += e + "\n";
		at = c == std::string::npos ? entries.size() + 1 : c + 1;
	}
	std::vector<Block> bs = blocks(old), out;
	bool placed = false;
	for (Block &b : bs) {
		if (b.name != name) {
			out.push_back(b);
		} else if (!placed && !entries.empty()) {
			out.push_back({name, body});
			placed = true;
		}
	}
	if (!placed && !entries.empty()) {
		if (!out.back().text.empty() && out.back().text.back() != '\n')
			out.back().text += "\n";
		out.push_back({name, body});
	}
	return joined(out);
}

} // namespace uarch::tune
