// uarch-audit: reading ELF files and ar archives with libelf.
//
// The reader turns a file image into the code it holds: executable
// sections with their bytes and the functions the symbol table puts in
// them. It never trusts the file: every offset is checked against the image,
// and anything malformed ends in an AuditError with a one-line reason.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace audit {

// Everything that stops the audit of one file: the message is the reason,
// printed as "uarch-audit: FILE: reason".
struct AuditError : std::runtime_error {
	using std::runtime_error::runtime_error;
};

enum class Arch { x86_64, aarch64 };

const char *arch_name(Arch a);

// A function from the symbol table, as a byte range of its section.
struct Function {
	std::string name;
	std::uint64_t start = 0; // offset from the start of the section
	std::uint64_t size = 0;
};

// An executable section. addr is its address in a linked file, 0 in a
// relocatable object (there functions are found by section index + value).
struct CodeSection {
	std::string name;
	std::uint64_t addr = 0;
	std::vector<std::uint8_t> bytes;
	std::vector<Function> functions; // sorted by start, one per start address
};

struct ElfObject {
	std::string name; // the file, or "archive(member)"
	Arch arch = Arch::x86_64;
	std::string type;            // "relocatable", "executable", "shared object", ...
	bool built_by_clang = false; // .comment names clang
	std::vector<CodeSection> code;
};

// The whole file at path, or an AuditError saying why not (missing,
// unreadable, a directory, empty).
std::vector<std::uint8_t> load_file(const std::string &path);

// The ELF objects in image: one for an ELF file, one per ELF member of an
// ar archive (none for an empty one, as glibc's libdl.a). libelf may use
// image as scratch space, so it is not const.
std::vector<ElfObject> read_elf(std::span<std::uint8_t> image, const std::string &name);

} // namespace audit
