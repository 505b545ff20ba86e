// uarch-audit: finds, per function, the instructions the uarch seeds are
// about (small rep movs/stos, mfence, missing prefetches, wait loops) in
// ELF files, and says what to do about them.
//
// Exit status: 0 on success, 2 on a usage error or a file it cannot audit
// (one line on stderr, nothing on stdout).
#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "classify.h"
#include "elf_reader.h"
#include "report.h"

namespace {

constexpr std::string_view kUsage =
	"usage: uarch-audit [--top N] [--json] FILE...\n"
	"       uarch-audit [--json] --diff OLD NEW\n"
	"\n"
	"Counts, per function and in total, the instructions that uarch's seeds are about:\n"
	"rep movs/stos (with the count when it is a constant), mfence/lfence/sfence, locked\n"
	"operations on the stack, prefetches, pause/umwait/tpause/mwaitx, and on aarch64\n"
	"prfm, dmb, dsb, wfe, yield and MOPS. FILE is an ELF executable, shared library,\n"
	"object or ar archive (x86-64 or aarch64).\n"
	"\n"
	"  --top N    list the N functions with the most counted instructions (default 20)\n"
	"  --json     one JSON object: files -> functions -> counters, totals, advice\n"
	"  --diff     the counters that changed from OLD to NEW, per function and in total\n"
	"  -h, --help this text\n";

int usage_error(const std::string &why)
{
	std::cerr << "uarch-audit: " << why << " (see --help)\n";
	return 2;
}

// The reports of one file, or false after printing its one-line error.
bool audit_file(const std::string &path, std::vector<audit::ObjectReport> &out)
{
	try {
		std::vector<std::uint8_t> image = audit::load_file(path);
		for (const audit::ElfObject &obj : audit::read_elf(image, path))
			out.push_back(audit::classify(obj));
		return true;
	} catch (const audit::AuditError &e) {
		std::cerr << "uarch-audit: " << path << ": " << e.what() << '\n';
	} catch (const std::bad_alloc &) {
		std::cerr << "uarch-audit: " << path << ": out of memory\n";
	}
	return false;
}

} // namespace

int main(int argc, char **argv)
{
	std::ios::sync_with_stdio(false);
	std::vector<std::string> files;
	std::size_t top = 20;
	bool json = false, diff = false, options_done = false;

	for (int i = 1; i < argc; ++i) {
		const std::string_view arg = argv[i];
		if (options_done || arg.size() < 2 || arg[0] != '-') {
			files.emplace_back(arg);
		} else if (arg == "--") {
			options_done = true;
		} else if (arg == "-h" || arg == "--help") {
			std::cout << kUsage;
			return 0;
		} else if (arg == "--json") {
			json = true;
		} else if (arg == "--diff") {
			diff = true;
		} else if (arg == "--top" || arg.starts_with("--top=")) {
			std::string value;
			if (arg == "--top") {
				if (i + 1 >= argc) return usage_error("--top needs a number");
				value = argv[++i];
			} else {
				value = arg.substr(6);
			}
			char *end = nullptr;
			errno = 0;
			const unsigned long long n = std::strtoull(value.c_str(), &end, 10);
			if (value.empty() || value[0] == '-' || *end != '\0' || errno == ERANGE)
				return usage_error("--top needs a number, not '" + value + "'");
			top = static_cast<std::size_t>(n);
		} else {
			return usage_error("unknown option '" + std::string(arg) + "'");
		}
	}
	if (diff && files.size() != 2) return usage_error("--diff needs two files, OLD and NEW");
	if (files.empty()) return usage_error("no input file");

	// Every file is read before anything is printed: an error never leaves
	// a partial table behind.
	std::vector<std::vector<audit::ObjectReport>> reports(files.size());
	for (std::size_t k = 0; k < files.size(); ++k)
		if (!audit_file(files[k], reports[k])) return 2;

	if (diff) {
		audit::print_diff(std::cout, files[0], reports[0], files[1], reports[1], json);
	} else {
		std::vector<audit::ObjectReport> all;
		for (std::size_t k = 0; k < files.size(); ++k) {
			if (reports[k].empty() && !json)
				std::cout << files[k] << ": no ELF object\n";
			for (auto &o : reports[k])
				all.push_back(std::move(o));
		}
		if (json)
			audit::print_json(std::cout, all);
		else
			audit::print_text(std::cout, all, top);
	}
	std::cout.flush();
	if (!std::cout) {
		std::cerr << "uarch-audit: cannot write standard output\n";
		return 2;
	}
	return 0;
}
