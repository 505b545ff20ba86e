// uarch-audit: reading ELF files and ar archives with libelf.
#include "elf_reader.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <tuple>

#include <ar.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

namespace audit {

const char *arch_name(Arch a)
{
	return a == Arch::x86_64 ? "x86-64" : "aarch64";
}

namespace {

// Closes a descriptor on every path out.
struct Fd {
	int fd;
	~Fd()
	{
		if (fd >= 0) close(fd);
	}
};

// Ends a libelf handle on every path out.
struct ElfHandle {
	Elf *e;
	~ElfHandle()
	{
		if (e) elf_end(e);
	}
};

[[noreturn]] void fail(const std::string &why)
{
	throw AuditError(why);
}

void init_libelf()
{
	static const bool ok = elf_version(EV_CURRENT) != EV_NONE;
	if (!ok) fail(std::string("libelf: ") + elf_errmsg(-1));
}

// True when [off, off+len) lies inside an image of size bytes.
bool inside(std::uint64_t off, std::uint64_t len, std::uint64_t size)
{
	return off <= size && len <= size - off;
}

const char *type_name(unsigned t)
{
	switch (t) {
	case ET_REL: return "relocatable";
	case ET_EXEC: return "executable";
	case ET_DYN: return "shared object";
	case ET_CORE: return "core file";
	default: return "unknown type";
	}
}

std::string name_at(Elf *e, std::size_t strtab, std::size_t off)
{
	const char *s = elf_strptr(e, strtab, off);
	return s ? s : "";
}

// The symbol's rank among aliases at one address: a global name before a
// weak one before a local one, then fewer leading underscores, then the
// shorter, then the alphabetically first ("memcpy" over "__memcpy").
auto alias_rank(const std::string &name, unsigned bind)
{
	int b = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
	auto underscores = name.find_first_not_of('_');
	return std::tuple<int, std::size_t, std::size_t, std::string_view>(b, underscores,
	                                                                   name.size(), name);
}

struct Candidate {
	Function f;
	unsigned bind;
};

// Puts the STT_FUNC symbols of the preferred symbol table (.symtab, else
// .dynsym) into the code sections they belong to.
void attach_functions(Elf *e, bool relocatable, std::size_t shnum, std::vector<CodeSection> &code,
                      const std::vector<int> &code_index)
{
	Elf_Scn *symtab = nullptr;
	GElf_Shdr symhdr{};
	for (Elf_Scn *scn = nullptr; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh)) continue;
		if (sh.sh_type == SHT_SYMTAB || (sh.sh_type == SHT_DYNSYM && !symtab)) {
			symtab = scn;
			symhdr = sh;
			if (sh.sh_type == SHT_SYMTAB) break;
		}
	}
	if (!symtab) return;
	Elf_Data *data = elf_getdata(symtab, nullptr);
	if (!data) fail(std::string("bad symbol table: ") + elf_errmsg(-1));

	std::vector<std::vector<Candidate>> found(code.size());
	const std::size_t count = data->d_size / gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT);
	for (std::size_t i = 0; i < count; ++i) {
		GElf_Sym sym;
		if (!gelf_getsym(data, static_cast<int>(i), &sym)) break;
		const unsigned type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_size == 0) continue;
		if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= shnum ||
		    sym.st_shndx >= SHN_LORESERVE)
			continue;
		const int idx = code_index[sym.st_shndx];
		if (idx < 0) continue;
		CodeSection &sec = code[static_cast<std::size_t>(idx)];
		const std::uint64_t start = relocatable ? sym.st_value : sym.st_value - sec.addr;
		if (!relocatable && sym.st_value < sec.addr) continue;
		if (start >= sec.bytes.size()) continue;
		std::string name = name_at(e, symhdr.sh_link, sym.st_name);
		if (name.empty()) continue;
		const std::uint64_t size =
			std::min<std::uint64_t>(sym.st_size, sec.bytes.size() - start);
		found[static_cast<std::size_t>(idx)].push_back(
			{Function{std::move(name), start, size},
		         static_cast<unsigned>(GELF_ST_BIND(sym.st_info))});
	}

	for (std::size_t s = 0; s < code.size(); ++s) {
		auto &c = found[s];
		std::sort(c.begin(), c.end(), [](const Candidate &a, const Candidate &b) {
			if (a.f.start != b.f.start) return a.f.start < b.f.start;
			return alias_rank(a.f.name, a.bind) < alias_rank(b.f.name, b.bind);
		});
		for (auto &cand : c)
			if (code[s].functions.empty() ||
			    code[s].functions.back().start != cand.f.start)
				code[s].functions.push_back(std::move(cand.f));
	}
}

// One ELF file (or archive member) in memory.
ElfObject read_one(Elf *e, const std::string &name)
{
	std::size_t size = 0;
	const char *raw = elf_rawfile(e, &size);
	if (!raw) fail(std::string("cannot read ELF image: ") + elf_errmsg(-1));
	if (size < EI_NIDENT || gelf_getclass(e) == ELFCLASSNONE)
		fail("truncated ELF file (header)");
	if (gelf_getclass(e) != ELFCLASS64) fail("unsupported ELF class (32-bit)");
	GElf_Ehdr eh;
	if (size < sizeof(Elf64_Ehdr) || !gelf_getehdr(e, &eh)) fail("truncated ELF file (header)");
	if (eh.e_ident[EI_DATA] != ELFDATA2LSB) fail("unsupported byte order (big-endian)");

	ElfObject obj;
	obj.name = name;
	obj.type = type_name(eh.e_type);
	switch (eh.e_machine) {
	case EM_X86_64: obj.arch = Arch::x86_64; break;
	case EM_AARCH64: obj.arch = Arch::aarch64; break;
	default: fail("unsupported machine (e_machine " + std::to_string(eh.e_machine) + ")");
	}

	// libelf reports 0 sections when their headers lie past the end: check
	// what the header claims first (e_shnum 0 with e_shoff set: the count is
	// in section 0).
	if (eh.e_shoff != 0 &&
	    !inside(eh.e_shoff,
	            std::uint64_t{std::max<unsigned>(eh.e_shnum, 1)} * sizeof(Elf64_Shdr), size))
		fail("truncated ELF file (section headers past the end)");
	std::size_t shnum = 0, shstrndx = 0;
	if (elf_getshdrnum(e, &shnum) != 0)
		fail(std::string("bad section headers: ") + elf_errmsg(-1));
	if (shnum > 0 && !inside(eh.e_shoff, std::uint64_t{shnum} * sizeof(Elf64_Shdr), size))
		fail("truncated ELF file (section headers past the end)");
	if (eh.e_phnum > 0 && eh.e_phnum != PN_XNUM &&
	    !inside(eh.e_phoff, std::uint64_t{eh.e_phnum} * sizeof(Elf64_Phdr), size))
		fail("truncated ELF file (program headers past the end)");
	if (shnum > 0 && elf_getshdrstrndx(e, &shstrndx) != 0)
		fail(std::string("bad section name table: ") + elf_errmsg(-1));

	const bool relocatable = eh.e_type == ET_REL;
	std::vector<int> code_index(shnum, -1);
	for (Elf_Scn *scn = nullptr; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			fail(std::string("bad section header: ") + elf_errmsg(-1));
		if (sh.sh_type == SHT_NOBITS) continue; // no bytes in the file (.bss)
		if (!inside(sh.sh_offset, sh.sh_size, size))
			fail("truncated ELF file (section " + std::to_string(elf_ndxscn(scn)) +
			     " past the end)");
		std::string sname = name_at(e, shstrndx, sh.sh_name);
		const auto bytes = reinterpret_cast<const std::uint8_t *>(raw) + sh.sh_offset;
		if (sname == ".comment") {
			std::string_view text(reinterpret_cast<const char *>(bytes), sh.sh_size);
			obj.built_by_clang = text.find("clang") != std::string_view::npos;
		}
		if (sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR) || sh.sh_size == 0)
			continue;
		const std::size_t ndx = elf_ndxscn(scn);
		if (ndx < shnum) code_index[ndx] = static_cast<int>(obj.code.size());
		obj.code.push_back(CodeSection{sname.empty() ? "?" : sname,
		                               relocatable ? 0 : sh.sh_addr,
		                               {bytes, bytes + sh.sh_size},
		                               {}});
	}

	// A file without section headers (sstrip'ed) still has its code in
	// executable PT_LOAD segments.
	if (shnum == 0) {
		std::size_t phnum = 0;
		if (elf_getphdrnum(e, &phnum) != 0) phnum = 0;
		for (std::size_t i = 0; i < phnum; ++i) {
			GElf_Phdr ph;
			if (!gelf_getphdr(e, static_cast<int>(i), &ph)) continue;
			if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) || ph.p_filesz == 0)
				continue;
			if (!inside(ph.p_offset, ph.p_filesz, size))
				fail("truncated ELF file (segment " + std::to_string(i) +
				     " past the end)");
			const auto bytes =
				reinterpret_cast<const std::uint8_t *>(raw) + ph.p_offset;
			obj.code.push_back(
				CodeSection{"LOAD", ph.p_vaddr, {bytes, bytes + ph.p_filesz}, {}});
		}
	}

	attach_functions(e, relocatable, shnum, obj.code, code_index);
	return obj;
}

// The size the header of the archive member at base claims. libelf cuts
// a member short at the end of the image without a word, so read it here.
std::uint64_t claimed_size(std::span<const std::uint8_t> image, std::int64_t base)
{
	if (base < static_cast<std::int64_t>(sizeof(ar_hdr)) ||
	    static_cast<std::uint64_t>(base) > image.size())
		fail("malformed archive");
	ar_hdr h;
	std::memcpy(&h, image.data() + base - sizeof(ar_hdr), sizeof h);
	std::uint64_t size = 0;
	for (const char c : h.ar_size) {
		if (c == ' ') break;
		if (c < '0' || c > '9') fail("malformed archive (member size)");
		size = size * 10 + static_cast<std::uint64_t>(c - '0');
	}
	return size;
}

// The ELF members of an archive, each named "name(member)".
std::vector<ElfObject> read_archive(Elf *ar, std::span<const std::uint8_t> image,
                                    const std::string &name)
{
	std::vector<ElfObject> objects;
	Elf_Cmd cmd = ELF_C_READ_MMAP; // ELF_C_READ would need a descriptor
	std::uint64_t end = SARMAG;    // of the last member ("!<arch>\n" before the first)
	std::string member;
	for (;;) {
		ElfHandle m{elf_begin(-1, cmd, ar)};
		if (!m.e) break;
		const Elf_Arhdr *h = elf_getarhdr(m.e);
		if (!h) fail(std::string("malformed archive: ") + elf_errmsg(-1));
		member = h->ar_name ? h->ar_name : "?";
		const std::int64_t base = elf_getbase(m.e);
		const std::uint64_t size = claimed_size(image, base);
		if (!inside(static_cast<std::uint64_t>(base), size, image.size()))
			fail("truncated archive (member " + member + ")");
		end = static_cast<std::uint64_t>(base) + size;
		// The symbol index and the long-name table are not ELF.
		if (elf_kind(m.e) == ELF_K_ELF) {
			try {
				objects.push_back(read_one(m.e, name + "(" + member + ")"));
			} catch (const AuditError &e) {
				fail("member " + member + ": " + e.what());
			}
		}
		cmd = elf_next(m.e);
		if (cmd == ELF_C_NULL) break;
	}
	// Members are 2-byte aligned; anything after the last one is a member
	// header libelf could not read.
	if (end + (end & 1) < image.size())
		fail(member.empty() ? "truncated archive"
		                    : "truncated archive (after member " + member + ")");
	// A cut between two members shows in the symbol index, which names the
	// offset of every member that defines a symbol.
	std::size_t nsyms = 0;
	if (const Elf_Arsym *sym = elf_getarsym(ar, &nsyms))
		for (std::size_t k = 0; k < nsyms; ++k)
			if (sym[k].as_name && !inside(sym[k].as_off, sizeof(ar_hdr), image.size()))
				fail("truncated archive (its index names a member past the end)");
	return objects;
}

} // namespace

std::vector<std::uint8_t> load_file(const std::string &path)
{
	Fd f{open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY)};
	if (f.fd < 0) fail(std::strerror(errno));
	struct stat st;
	if (fstat(f.fd, &st) != 0) fail(std::strerror(errno));
	if (S_ISDIR(st.st_mode)) fail(std::strerror(EISDIR));
	if (!S_ISREG(st.st_mode)) fail("not a regular file");
	if (st.st_size == 0) fail("empty file");
	std::vector<std::uint8_t> buf(static_cast<std::size_t>(st.st_size));
	std::size_t done = 0;
	while (done < buf.size()) {
		const ssize_t n = read(f.fd, buf.data() + done, buf.size() - done);
		if (n < 0 && errno == EINTR) continue;
		if (n < 0) fail(std::strerror(errno));
		if (n == 0) break; // the file shrank while we read it
		done += static_cast<std::size_t>(n);
	}
	buf.resize(done);
	if (buf.empty()) fail("empty file");
	return buf;
}

std::vector<ElfObject> read_elf(std::span<std::uint8_t> image, const std::string &name)
{
	init_libelf();
	if (image.empty()) fail("empty file");
	if (image.size() >= SELFMAG && std::memcmp(image.data(), ELFMAG, SELFMAG) == 0 &&
	    image.size() < sizeof(Elf64_Ehdr))
		fail("truncated ELF file (header)");

	if (image.size() >= 8 && std::memcmp(image.data(), "!<thin>\n", 8) == 0)
		fail("thin archive: audit its member files instead");

	ElfHandle top{elf_memory(reinterpret_cast<char *>(image.data()), image.size())};
	if (!top.e) fail(std::string("not an ELF file or ar archive: ") + elf_errmsg(-1));

	std::vector<ElfObject> objects;
	switch (elf_kind(top.e)) {
	case ELF_K_ELF: objects.push_back(read_one(top.e, name)); break;
	case ELF_K_AR: objects = read_archive(top.e, image, name); break;
	default: fail("not an ELF file or ar archive");
	}
	return objects;
}

} // namespace audit
