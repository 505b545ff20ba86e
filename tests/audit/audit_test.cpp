// Tests of uarch-audit.
//
// Decoder: known instruction bytes through classify(), in process.
// Command: uarch-audit ($UARCH_AUDIT) on fixtures that meson.build compiles
// with gcc, clang and aarch64-linux-gnu-gcc ($AUDIT_FIXTURE_<name>), with
// exact expected counts; and bad input, which must give exit code 2 and one
// line on stderr.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "classify.h"
#include "elf_reader.h"
#include "report.h"

extern char **environ;

namespace {

namespace fs = std::filesystem;
using audit::Counter;

bool has(const std::string &text, const std::string &part)
{
	return text.find(part) != std::string::npos;
}

// ---------------------------------------------------------------------------
// Decoder, in process

audit::ObjectReport classify_bytes(audit::Arch arch, std::vector<std::uint8_t> bytes)
{
	audit::ElfObject obj;
	obj.name = "bytes";
	obj.arch = arch;
	obj.type = "relocatable";
	obj.code.push_back({".text", 0, std::move(bytes), {}});
	return audit::classify(obj);
}

std::vector<std::uint8_t> words(const std::vector<std::uint32_t> &ws)
{
	std::vector<std::uint8_t> b;
	for (std::uint32_t w : ws)
		for (int k = 0; k < 4; ++k)
			b.push_back(static_cast<std::uint8_t>(w >> (8 * k)));
	return b;
}

TEST(X86Decode, CountsByPrefixAndOpcodeNotByCapstoneName)
{
	const auto r = classify_bytes(
		audit::Arch::x86_64,
		{
	                0xf2, 0x0f, 0xae, 0xf0, // umwait %eax (capstone 4: "mfence")
	                0x66, 0x0f, 0xae, 0xf0, // tpause %eax (capstone 4: "mfence")
	                0xf3, 0x0f, 0xae, 0xf0, // umonitor %rax (capstone 4: "mfence")
	                0x0f, 0x01, 0xfb,       // mwaitx (capstone 4: invalid)
	                0x0f, 0x01, 0xfa,       // monitorx
	                0xf3, 0x90,             // pause
	                0x0f, 0x0d, 0x0f,       // prefetchw (%rdi)
	                0x0f, 0x18, 0x0f,       // prefetcht0 (%rdi)
	                0x0f, 0x18, 0x57, 0x08, // prefetcht1 8(%rdi)
	                0x0f, 0x18, 0x5f, 0x08, // prefetcht2 8(%rdi)
	                0x0f, 0x18, 0x47, 0x08, // prefetchnta 8(%rdi)
	                0x0f, 0xae, 0xf0,       // mfence
	                0x0f, 0xae, 0xe8,       // lfence
	                0x0f, 0xae, 0xf8,       // sfence
	                0xf0, 0x83, 0x84, 0x24, 0x7c, 0xff, 0xff, 0xff, 0x00, // lock addl $0,-0x84(%rsp)
	                0xf0, 0x48, 0x83, 0x0c, 0x24, 0x00, // lock orq $0,(%rsp)
	                0xf0, 0xff, 0x07,       // lock incl (%rdi): not the stack
	                0x66, 0xf3, 0xa5,       // rep movsw (capstone 4: "movsd")
	                0xf3, 0xa5,             // rep movsl
	                0xf2, 0x0f, 0x10, 0xc8, // movsd %xmm0,%xmm1: SSE, no string op
	                0xa5,                   // movsl without rep
		});
	const auto &t = r.totals;
	EXPECT_EQ(t.insns, 21u);
	EXPECT_EQ(t[Counter::umwait], 1u);
	EXPECT_EQ(t[Counter::tpause], 1u);
	EXPECT_EQ(t[Counter::mwaitx], 1u);
	EXPECT_EQ(t[Counter::pause], 1u);
	EXPECT_EQ(t[Counter::prefetchw], 1u);
	EXPECT_EQ(t[Counter::prefetcht0], 1u);
	EXPECT_EQ(t[Counter::prefetcht1], 1u);
	EXPECT_EQ(t[Counter::prefetcht2], 1u);
	EXPECT_EQ(t[Counter::prefetchnta], 1u);
	EXPECT_EQ(t[Counter::mfence], 1u);
	EXPECT_EQ(t[Counter::lfence], 1u);
	EXPECT_EQ(t[Counter::sfence], 1u);
	EXPECT_EQ(t[Counter::lock_stack], 2u);
	EXPECT_EQ(t[Counter::rep_movsw], 1u);
	EXPECT_EQ(t[Counter::rep_movsd], 1u);
	EXPECT_EQ(t.flagged(), 16u);
}

TEST(X86Decode, RepCountFromAConstantInEcx)
{
	// mov $0x15,%ecx; rep movsq (seed 001's sync_regs)
	auto r = classify_bytes(audit::Arch::x86_64, {0xb9, 0x15, 0, 0, 0, 0xf3, 0x48, 0xa5});
	const auto &c = r.functions.at("[.text]");
	ASSERT_EQ(c.reps.size(), 1u);
	EXPECT_EQ(c.reps[0].insn, "rep movsq");
	EXPECT_EQ(c.reps[0].offset, 5u);
	EXPECT_EQ(c.reps[0].count, 21u);
	EXPECT_EQ(c.reps[0].bytes, 168u);
	EXPECT_TRUE(c.reps[0].small());
	EXPECT_EQ(c[Counter::rep_small], 1u);

	// A call in between clobbers rcx.
	r = classify_bytes(audit::Arch::x86_64,
	                   {0xb9, 0x15, 0, 0, 0, 0xe8, 0, 0, 0, 0, 0xf3, 0x48, 0xa5});
	EXPECT_EQ(r.totals[Counter::rep_movsq], 1u);
	EXPECT_TRUE(r.functions.at("[.text]").reps.empty());
}

TEST(Arm64Decode, BarriersPrefetchesAndWaits)
{
	const auto r = classify_bytes(audit::Arch::aarch64,
	                              words({
	                                      0xf9800000, // prfm pldl1keep, [x0]
	                                      0xf8803002, // prfum pldl2keep, [x0, #3]
	                                      0xd5033bbf, // dmb ish
	                                      0xd5033f9f, // dsb sy
	                                      0xd503205f, // wfe
	                                      0xd503203f, // yield
	                                      0xd503207f, // wfi: not counted
	                                      0xd5033fdf, // isb: not counted
	                              }));
	EXPECT_EQ(r.totals.insns, 8u);
	EXPECT_EQ(r.totals[Counter::prfm], 2u);
	EXPECT_EQ(r.totals[Counter::dmb], 1u);
	EXPECT_EQ(r.totals[Counter::dsb], 1u);
	EXPECT_EQ(r.totals[Counter::wfe], 1u);
	EXPECT_EQ(r.totals[Counter::yield], 1u);
}

// binutils 2.40 decodes every o0/op1/op2 combination below as a MOPS
// instruction, except SET* with op2 = 11xx, and none of the words with one
// fixed bit flipped (checked with aarch64-linux-gnu-objdump).
TEST(Arm64Decode, MopsByEncoding)
{
	std::vector<std::uint32_t> ws;
	const std::uint32_t regs = 2u << 16 | 1u << 5; // Rs=x2, Rn=x1, Rd=x0
	for (std::uint32_t o0 = 0; o0 < 2; ++o0)
		for (std::uint32_t op1 = 0; op1 < 4; ++op1)
			for (std::uint32_t op2 = 0; op2 < 16; ++op2)
				ws.push_back(0x19000400u | o0 << 26 | op1 << 22 | op2 << 12 | regs);
	auto r = classify_bytes(audit::Arch::aarch64, words(ws));
	EXPECT_EQ(r.totals[Counter::mops_cpy], 2u * 3 * 16);
	EXPECT_EQ(r.totals[Counter::mops_set], 2u * 3 * 4);

	ws.clear();
	for (int bit : {31, 30, 29, 28, 27, 25, 24, 21, 11, 10})
		ws.push_back((0x19000400u | regs) ^ (1u << bit));
	r = classify_bytes(audit::Arch::aarch64, words(ws));
	EXPECT_EQ(r.totals[Counter::mops_cpy] + r.totals[Counter::mops_set], 0u);

	// cpyp, cpym, cpye; setp, setm, sete as the assembler encodes them.
	r = classify_bytes(audit::Arch::aarch64, words({0x1d010440, 0x1d410440, 0x1d810440,
	                                                0x19c20420, 0x19c24420, 0x19c28420}));
	EXPECT_EQ(r.totals[Counter::mops_cpy], 3u);
	EXPECT_EQ(r.totals[Counter::mops_set], 3u);
}

TEST(Reader, RejectsWhatIsNotElf)
{
	std::vector<std::uint8_t> text{'h', 'e', 'l', 'l', 'o', '\n'};
	EXPECT_THROW(audit::read_elf(text, "text"), audit::AuditError);
	std::vector<std::uint8_t> head{0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0};
	try {
		audit::read_elf(head, "head");
		FAIL() << "a 10-byte ELF header was accepted";
	} catch (const audit::AuditError &e) {
		EXPECT_STREQ(e.what(), "truncated ELF file (header)");
	}
	std::vector<std::uint8_t> empty;
	EXPECT_THROW(audit::read_elf(empty, "empty"), audit::AuditError);
}

TEST(Json, EscapesNamesAndKeepsUtf8)
{
	audit::ObjectReport r;
	r.name = "x.o";
	r.functions["a\"b\\c\x01\xff"].insns = 1;
	r.functions["caf\xc3\xa9"].insns = 2;
	std::ostringstream out;
	audit::print_json(out, {r});
	EXPECT_TRUE(has(out.str(), R"("a\"b\\c\u0001\u00ff": {"insns": 1)")) << out.str();
	EXPECT_TRUE(has(out.str(), "\"caf\xc3\xa9\": {\"insns\": 2")) << out.str();
}

// ---------------------------------------------------------------------------
// The command

struct Result {
	int rc = -1;
	std::string out, err;
};

std::string slurp(const std::string &path)
{
	std::ifstream f(path, std::ios::binary);
	return {std::istreambuf_iterator<char>(f), {}};
}

// A fresh directory for one test, removed at its end.
class TempDir {
public:
	TempDir()
	{
		std::string tmpl = (fs::temp_directory_path() / "uarch-audit-test.XXXXXX").string();
		if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
		path_ = tmpl;
		chmod(path_.c_str(), 0755); // for the run as nobody
	}
	~TempDir()
	{
		std::error_code ec;
		fs::remove_all(path_, ec);
	}
	std::string operator/(const std::string &name) const { return (path_ / name).string(); }

private:
	fs::path path_;
};

// Runs argv[0] (a path) with argv, stdin from /dev/null, and captures stdout and stderr.
Result run(const std::vector<std::string> &argv, const std::string &stdin_path = "/dev/null")
{
	TempDir dir;
	const std::string out = dir / "stdout", err = dir / "stderr";
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, stdin_path.c_str(), O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	std::vector<char *> args;
	for (const auto &a : argv)
		args.push_back(const_cast<char *>(a.c_str()));
	args.push_back(nullptr);
	pid_t pid;
	Result r;
	if (posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ) == 0) {
		int status = 0;
		waitpid(pid, &status, 0);
		r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
	posix_spawn_file_actions_destroy(&fa);
	r.out = slurp(out);
	r.err = slurp(err);
	return r;
}

std::string audit_exe()
{
	const char *p = std::getenv("UARCH_AUDIT");
	return p ? p : "uarch-audit";
}

Result audit_cmd(std::vector<std::string> args)
{
	args.insert(args.begin(), audit_exe());
	return run(args);
}

// $AUDIT_FIXTURE_<name with . as _>, when meson.build could build it.
std::optional<std::string> fixture(std::string name)
{
	std::replace(name.begin(), name.end(), '.', '_');
	const char *p = std::getenv(("AUDIT_FIXTURE_" + name).c_str());
	if (!p || !fs::exists(p)) return std::nullopt;
	return p;
}

#define FIXTURE(var, name, tool)                                                                   \
	const auto var##_path = fixture(name);                                                     \
	if (!var##_path) GTEST_SKIP() << name " was not built: " tool " not found";                \
	const std::string var = *var##_path

// The line the JSON writer gives one function (it writes one per line).
std::string function_line(const std::string &json, const std::string &function)
{
	const std::string key = "\n        \"" + function + "\": {";
	const auto at = json.find(key);
	if (at == std::string::npos) return "";
	return json.substr(at + 1, json.find('\n', at + 1) - at - 1);
}

// The first "totals" line: the first object's.
std::string totals_line(const std::string &json)
{
	const auto at = json.find("\"totals\": {");
	if (at == std::string::npos) return "";
	return json.substr(at, json.find('\n', at) - at);
}

// A rep site as the JSON writer gives it.
std::string rep_const(const char *insn, int offset, int count, int bytes, bool small)
{
	return "{\"insn\": \"" + std::string(insn) + "\", \"offset\": " + std::to_string(offset) +
	       ", \"count\": " + std::to_string(count) + ", \"bytes\": " + std::to_string(bytes) +
	       ", \"small\": " + (small ? "true" : "false") + "}";
}

// A counter's value in a JSON line; absent means 0.
std::uint64_t count(const std::string &line, const std::string &counter)
{
	std::smatch m;
	if (std::regex_search(line, m, std::regex("\"" + counter + "\": ([0-9]+)")))
		return std::stoull(m[1]);
	return 0;
}

std::string json_of(const std::string &file)
{
	const Result r = audit_cmd({"--json", file});
	EXPECT_EQ(r.rc, 0) << r.err;
	return r.out;
}

TEST(Command, StructCopyGccIsRepMovsqWithConstantCounts)
{
	FIXTURE(obj, "struct_copy_gcc.o", "gcc");
	const std::string json = json_of(obj);
	const std::string copy = function_line(json, "copy_regs");
	const std::string clear = function_line(json, "clear_regs");
	const std::string page = function_line(json, "copy_page");
	EXPECT_EQ(count(copy, "rep_movsq"), 1u) << json;
	EXPECT_EQ(count(copy, "rep_small"), 1u);
	EXPECT_TRUE(has(copy, rep_const("rep movsq", 5, 21, 168, true))) << copy;
	EXPECT_EQ(count(clear, "rep_stosq"), 1u) << json;
	EXPECT_TRUE(has(clear, rep_const("rep stosq", 7, 21, 168, true))) << clear;
	EXPECT_EQ(count(page, "rep_movsq"), 1u) << json;
	EXPECT_EQ(count(page, "rep_small"), 0u);
	EXPECT_TRUE(has(page, R"("count": 64, "bytes": 512, "small": false)")) << page;
	const std::string totals = totals_line(json);
	EXPECT_EQ(count(totals, "rep_movsq"), 2u);
	EXPECT_EQ(count(totals, "rep_stosq"), 1u);
	EXPECT_EQ(count(totals, "rep_small"), 2u);

	const Result text = audit_cmd({obj});
	EXPECT_EQ(text.rc, 0);
	EXPECT_TRUE(has(text.out, "copy_regs+0x5: rep movsq, count 21 = 168 bytes, small"))
		<< text.out;
	EXPECT_TRUE(
		has(text.out, "-mmemcpy-strategy=unrolled_loop:256:noalign,libcall:-1:noalign"));
	EXPECT_TRUE(
		has(text.out, "-mmemset-strategy=unrolled_loop:256:noalign,libcall:-1:noalign"));
	EXPECT_TRUE(has(text.out, "inlined copies never call memcpy"));
}

TEST(Command, Seed001FlagsLeaveNoRepMovsOrStos)
{
	FIXTURE(obj, "struct_copy_gcc_seed001.o", "gcc");
	const std::string json = json_of(obj);
	const std::string totals = totals_line(json);
	for (const char *c : {"rep_movsb", "rep_movsw", "rep_movsd", "rep_movsq", "rep_stosb",
	                      "rep_stosw", "rep_stosd", "rep_stosq", "rep_small"})
		EXPECT_EQ(count(totals, c), 0u) << c << ": " << totals;
	EXPECT_NE(totals, "");
	EXPECT_FALSE(has(json, "mmemcpy-strategy"));
}

TEST(Command, DiffShowsRepMovsqGoingToZero)
{
	FIXTURE(before, "struct_copy_gcc.o", "gcc");
	FIXTURE(after, "struct_copy_gcc_seed001.o", "gcc");
	const Result r = audit_cmd({"--diff", before, after});
	ASSERT_EQ(r.rc, 0) << r.err;
	const auto matches = [&](const std::string &re) {
		return std::regex_search(r.out, std::regex(re));
	};
	EXPECT_TRUE(matches(R"(\n  copy_regs +rep_movsq +1 +0\n)")) << r.out;
	EXPECT_TRUE(matches(R"(\n  clear_regs +rep_stosq +1 +0\n)")) << r.out;
	EXPECT_TRUE(matches(R"(\n  copy_page +rep_movsq +1 +0\n)")) << r.out;
	EXPECT_TRUE(matches(R"(\n  \(total\) +rep_movsq +2 +0\n)")) << r.out;
	EXPECT_TRUE(matches(R"(\n  \(total\) +rep_small +2 +0\n)")) << r.out;
	EXPECT_FALSE(matches(R"(\n  \[\.text\])")) << "unchanged buckets are listed:\n" << r.out;
}

TEST(Command, DiffOfLinkedPrograms)
{
	FIXTURE(before, "struct_copy_prog", "gcc");
	FIXTURE(after, "struct_copy_prog_seed001", "gcc");
	const Result r = audit_cmd({"--diff", before, after});
	ASSERT_EQ(r.rc, 0) << r.err;
	EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\n  copy_regs +rep_movsq +1 +0\n)")))
		<< r.out;
	EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\n  \(total\) +rep_stosq +1 +0\n)")))
		<< r.out;
}

TEST(Command, LinkedProgramAttributesByAddress)
{
	FIXTURE(prog, "struct_copy_prog", "gcc");
	const std::string json = json_of(prog);
	EXPECT_TRUE(has(function_line(json, "copy_regs"), R"("count": 21, "bytes": 168)")) << json;
	EXPECT_EQ(count(function_line(json, "clear_regs"), "rep_stosq"), 1u);
	EXPECT_EQ(count(function_line(json, "main"), "insns") > 0, true);
	EXPECT_EQ(count(totals_line(json), "rep_movsq"), 2u);
}

TEST(Command, StrippedProgramCountsPerSection)
{
	FIXTURE(prog, "struct_copy_prog_stripped", "gcc");
	const std::string json = json_of(prog);
	const std::string text = function_line(json, "[.text]");
	EXPECT_EQ(count(text, "rep_movsq"), 2u) << json;
	EXPECT_EQ(count(text, "rep_stosq"), 1u) << json;
	EXPECT_EQ(count(text, "rep_small"), 2u) << json;
	EXPECT_EQ(function_line(json, "copy_regs"), "");
}

TEST(Command, ArchiveMembers)
{
	FIXTURE(lib, "libfixtures.a", "gcc or ar");
	const Result r = audit_cmd({lib});
	ASSERT_EQ(r.rc, 0) << r.err;
	EXPECT_TRUE(has(r.out, "libfixtures.a(struct_copy_gcc.o): x86-64 relocatable, 3 functions"))
		<< r.out;
	EXPECT_TRUE(has(r.out, "libfixtures.a(barrier_gcc.o): x86-64 relocatable"));
	EXPECT_TRUE(has(r.out, "all 2 objects:"));
	const std::string json = json_of(lib);
	EXPECT_EQ(count(function_line(json, "copy_regs"), "rep_movsq"), 1u);
	EXPECT_EQ(count(function_line(json, "mb_mfence"), "mfence"), 1u);
}

// In an archive, members with nothing counted share one line and their
// advice is given once; a diff lists unchanged members on one line too.
TEST(Command, ArchiveQuietMembersOnOneLine)
{
	FIXTURE(lib, "libquiet.a", "gcc, clang or ar");
	const Result r = audit_cmd({lib});
	ASSERT_EQ(r.rc, 0) << r.err;
	EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\n2 objects without counted instructions: )"
							R"([^\n]*libquiet\.a\(prefetch_builtin_clang\.o\), )"
							R"([^\n]*libquiet\.a\(prefetch_builtin_clang_O1\.o\)\n)")))
		<< r.out;
	EXPECT_FALSE(has(r.out, "libquiet.a(prefetch_builtin_clang.o): x86-64")) << r.out;
	EXPECT_TRUE(has(r.out, "libquiet.a(struct_copy_gcc.o): x86-64 relocatable")) << r.out;
	std::size_t seed000 = 0;
	for (std::size_t at = r.out.find("seed 000"); at != std::string::npos; at = r.out.find("seed 000", at + 1))
		++seed000;
	EXPECT_EQ(seed000, 1u) << r.out;

	const Result d = audit_cmd({"--diff", lib, lib});
	ASSERT_EQ(d.rc, 0) << d.err;
	EXPECT_TRUE(has(d.out, "3 objects with no counter changed: prefetch_builtin_clang.o, "
			       "prefetch_builtin_clang_O1.o, struct_copy_gcc.o")) << d.out;
	EXPECT_FALSE(has(d.out, "\n== ")) << d.out;
}

TEST(Command, ClangDropsBuiltinPrefetchUnderNoSse)
{
	FIXTURE(obj, "prefetch_clang.o", "clang");
	const std::string json = json_of(obj);
	EXPECT_NE(function_line(json, "pf_builtin"), "") << json;
	EXPECT_EQ(count(function_line(json, "pf_builtin"), "prefetcht0"), 0u) << json;
	EXPECT_EQ(count(function_line(json, "pf_uarch"), "prefetcht0"), 1u) << json;
	EXPECT_EQ(count(totals_line(json), "prefetcht0"), 1u);
	EXPECT_TRUE(has(json, "\"built_by_clang\": true"));
}

TEST(Command, GccKeepsBuiltinPrefetch)
{
	FIXTURE(obj, "prefetch_gcc.o", "gcc");
	const std::string json = json_of(obj);
	EXPECT_EQ(count(function_line(json, "pf_builtin"), "prefetcht0"), 1u) << json;
	EXPECT_EQ(count(function_line(json, "pf_uarch"), "prefetcht0"), 1u) << json;
}

TEST(Command, AdviceOnClangCodeWithoutPrefetches)
{
	FIXTURE(clang_obj, "prefetch_builtin_clang.o", "clang");
	FIXTURE(gcc_obj, "prefetch_builtin_gcc.o", "gcc");
	const Result c = audit_cmd({clang_obj});
	EXPECT_EQ(c.rc, 0);
	EXPECT_TRUE(has(c.out, "seed 000")) << c.out;
	EXPECT_TRUE(has(c.out, "uarch_prefetch()")) << c.out;
	const Result g = audit_cmd({gcc_obj});
	EXPECT_FALSE(has(g.out, "seed 000")) << g.out;
}

TEST(Command, BarriersGcc)
{
	FIXTURE(obj, "barrier_gcc.o", "gcc");
	const std::string json = json_of(obj);
	EXPECT_EQ(count(function_line(json, "mb_mfence"), "mfence"), 1u) << json;
	EXPECT_EQ(count(function_line(json, "mb_locked"), "lock_stack"), 1u) << json;
	EXPECT_EQ(count(function_line(json, "mb_sync"), "lock_stack"), 1u) << json;
	EXPECT_EQ(count(function_line(json, "rmb_lfence"), "lfence"), 1u);
	EXPECT_EQ(count(function_line(json, "wmb_sfence"), "sfence"), 1u);
	EXPECT_EQ(count(function_line(json, "inc_counter"), "lock_stack"), 0u);
	EXPECT_EQ(count(function_line(json, "relax"), "pause"), 1u);
	const std::string waits = function_line(json, "waits");
	EXPECT_EQ(count(waits, "umwait"), 1u) << waits;
	EXPECT_EQ(count(waits, "tpause"), 1u);
	EXPECT_EQ(count(waits, "mwaitx"), 1u);
	EXPECT_EQ(count(waits, "mfence"), 0u);
	const std::string totals = totals_line(json);
	EXPECT_EQ(count(totals, "mfence"), 1u);
	EXPECT_EQ(count(totals, "lock_stack"), 2u);

	const Result text = audit_cmd({obj});
	EXPECT_TRUE(has(text.out, "uarch_smp_mb()")) << text.out;
	EXPECT_TRUE(has(text.out, "seed 003"));
}

TEST(Command, BarriersClangSyncIsMfence)
{
	FIXTURE(obj, "barrier_clang.o", "clang");
	const std::string json = json_of(obj);
	EXPECT_EQ(count(function_line(json, "mb_sync"), "mfence"), 1u) << json;
	EXPECT_EQ(count(function_line(json, "mb_locked"), "lock_stack"), 1u) << json;
	EXPECT_EQ(count(totals_line(json), "mfence"), 2u);
}

TEST(Command, RepCountHeuristics)
{
	FIXTURE(obj, "rep_asm.o", "gcc");
	const std::string json = json_of(obj);
	const auto line = [&](const char *f) { return function_line(json, f); };
	EXPECT_TRUE(has(line("rep_adjacent"), R"("count": 5, "bytes": 5, "small": true)")) << json;
	EXPECT_TRUE(has(line("rep_window"), R"("count": 3, "bytes": 24, "small": true)"));
	EXPECT_FALSE(has(line("rep_too_far"), "rep_const"));
	EXPECT_EQ(count(line("rep_too_far"), "rep_movsq"), 1u);
	EXPECT_TRUE(has(line("rep_big"), R"("count": 40, "bytes": 320, "small": false)"));
	EXPECT_TRUE(has(line("rep_zero"), R"("count": 0, "bytes": 0, "small": true)"));
	EXPECT_FALSE(has(line("rep_after_call"), "rep_const"));
	EXPECT_EQ(count(line("rep_movsw"), "rep_movsw"), 1u);
	EXPECT_EQ(count(line("rep_movsw"), "rep_movsd"), 0u);
	EXPECT_TRUE(has(line("rep_movsw"), R"("count": 100, "bytes": 200)"));
	EXPECT_TRUE(has(line("rep_movsl"), rep_const("rep movsd", 10, 32, 128, true)))
		<< line("rep_movsl");
	EXPECT_FALSE(has(line("rep_r9"), "rep_const"));
	EXPECT_EQ(count(line("sse_movsd"), "rep_movsd"), 0u);
	EXPECT_EQ(count(line("sse_movsd"), "insns"), 3u);
	EXPECT_EQ(count(totals_line(json), "rep_small"), 5u);
}

// A ymm/zmm0-15 write that reaches a ret or a tail jmp without vzeroupper.
TEST(Command, MissingVzeroupper)
{
	FIXTURE(obj, "vzeroupper.o", "gcc");
	const std::string json = json_of(obj);
	const auto missing = [&](const char *f) { return count(function_line(json, f), "no_vzeroupper"); };
	EXPECT_EQ(missing("ymm_ret"), 1u) << json;
	EXPECT_EQ(missing("dirty_branch_back"), 1u);
	EXPECT_EQ(missing("zmm_tail_jmp"), 1u);
	EXPECT_EQ(missing("ymm_vzeroupper"), 0u);
	EXPECT_EQ(missing("clean_block_after_dirty"), 0u);
	EXPECT_EQ(missing("xmm_and_high_zmm"), 0u);
	EXPECT_EQ(count(totals_line(json), "no_vzeroupper"), 3u);
}

// The library itself: every function that writes ymm/zmm clears the upper
// state before it returns.
TEST(Command, LibuarchHasNoMissingVzeroupper)
{
	const char *lib = std::getenv("AUDIT_LIBUARCH");
	if (!lib || !fs::exists(lib)) GTEST_SKIP() << "AUDIT_LIBUARCH not set";
	const std::string json = json_of(lib);
	if (json.find("\"arch\": \"x86-64\"") == std::string::npos)
		GTEST_SKIP() << "not an x86-64 library";
	EXPECT_EQ(count(totals_line(json), "no_vzeroupper"), 0u) << json;
}

TEST(Command, Arm64PrefetchesAndBarriers)
{
	FIXTURE(obj, "arm64.o", "aarch64-linux-gnu-gcc");
	const std::string json = json_of(obj);
	EXPECT_TRUE(has(json, "\"arch\": \"aarch64\""));
	EXPECT_EQ(count(function_line(json, "pf_read"), "prfm"), 1u) << json;
	EXPECT_EQ(count(function_line(json, "pf_write"), "prfm"), 1u);
	EXPECT_EQ(count(function_line(json, "mb"), "dmb"), 1u);
	EXPECT_EQ(count(function_line(json, "wmb"), "dmb"), 1u);
	EXPECT_EQ(count(function_line(json, "dsb_sy"), "dsb"), 1u);
	EXPECT_EQ(count(function_line(json, "wait_event"), "wfe"), 1u);
	EXPECT_EQ(count(function_line(json, "relax"), "yield"), 1u);
	const std::string totals = totals_line(json);
	EXPECT_EQ(count(totals, "prfm"), 2u);
	EXPECT_EQ(count(totals, "dmb"), 2u);
}

TEST(Command, Arm64Mops)
{
	FIXTURE(obj, "arm64_mops.o", "aarch64-linux-gnu-gcc with an assembler that knows +mops");
	const std::string json = json_of(obj);
	EXPECT_EQ(count(function_line(json, "mops_copy"), "mops_cpy"), 3u) << json;
	EXPECT_EQ(count(function_line(json, "mops_copy_forward"), "mops_cpy"), 3u);
	EXPECT_EQ(count(function_line(json, "mops_set"), "mops_set"), 3u);
	EXPECT_EQ(count(function_line(json, "mops_set"), "insns"), 4u);
}

TEST(Command, JsonParses)
{
	FIXTURE(a, "struct_copy_gcc.o", "gcc");
	FIXTURE(b, "struct_copy_gcc_seed001.o", "gcc");
	const char *python = std::getenv("AUDIT_PYTHON");
	if (!python) GTEST_SKIP() << "python3 not found";
	TempDir dir;
	const std::string report = dir / "report.json", diff = dir / "diff.json";
	std::ofstream(report) << audit_cmd({"--json", a, b}).out;
	std::ofstream(diff) << audit_cmd({"--json", "--diff", a, b}).out;
	const Result r = run({python, "-c",
	                      "import json, sys\n"
	                      "r = json.load(open(sys.argv[1]))\n"
	                      "d = json.load(open(sys.argv[2]))\n"
	                      "f = r['files'][sys.argv[3]]\n"
	                      "assert f['arch'] == 'x86-64', f\n"
	                      "assert f['functions']['copy_regs']['rep_movsq'] == 1\n"
	                      "assert f['functions']['copy_regs']['rep_const'][0]['count'] == 21\n"
	                      "assert r['totals']['rep_movsq'] == 2, r['totals']\n"
	                      "o = d['objects'][0]\n"
	                      "assert o['functions']['copy_regs']['rep_movsq'] == [1, 0], o\n"
	                      "assert o['totals']['rep_movsq'] == [2, 0], o\n",
	                      report, diff, a});
	EXPECT_EQ(r.rc, 0) << r.out << r.err;
}

// ---------------------------------------------------------------------------
// Bad input: exit code 2, nothing on stdout, one line on stderr.

void expect_one_line_error(const Result &r, const std::string &reason)
{
	EXPECT_EQ(r.rc, 2);
	EXPECT_EQ(r.out, "");
	EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
	EXPECT_EQ(r.err.rfind("uarch-audit: ", 0), 0u) << r.err;
	EXPECT_TRUE(has(r.err, reason)) << r.err;
}

TEST(BadInput, NotElf)
{
	TempDir dir;
	std::ofstream(dir / "text") << "just text\n";
	expect_one_line_error(audit_cmd({dir / "text"}), ": not an ELF file or ar archive");
}

TEST(BadInput, TruncatedElf)
{
	const std::string self = slurp("/proc/self/exe");
	ASSERT_GT(self.size(), 8192u);
	TempDir dir;
	for (std::size_t size : {std::size_t{4}, std::size_t{40}, std::size_t{100},
	                         std::size_t{4096}, self.size() / 2, self.size() - 1}) {
		SCOPED_TRACE(size);
		std::ofstream(dir / "cut", std::ios::binary | std::ios::trunc)
			<< self.substr(0, size);
		expect_one_line_error(audit_cmd({dir / "cut"}), ": truncated ELF file");
	}
}

// Every cut of an object, or of an archive with a symbol index (ar s, as
// libfixtures.a), is an error: libelf cuts archive members short without a
// word, and finds no sections when their headers are past the end. An
// archive without an index cut exactly between two members cannot be told
// from a shorter archive.
TEST(BadInput, EveryCutIsAnError)
{
	FIXTURE(obj, "struct_copy_gcc.o", "gcc");
	FIXTURE(lib, "libfixtures.a", "gcc or ar");
	TempDir dir;
	for (const std::string &file : {obj, lib}) {
		const std::string whole = slurp(file);
		for (std::size_t size = 9; size < whole.size(); size += 61) { // 8: an empty archive
			SCOPED_TRACE(file + " cut to " + std::to_string(size) + " bytes");
			std::ofstream(dir / "cut", std::ios::binary | std::ios::trunc)
				<< whole.substr(0, size);
			expect_one_line_error(audit_cmd({dir / "cut"}), "truncated");
		}
	}
}

TEST(Command, EmptyArchiveIsNoError)
{
	TempDir dir;
	std::ofstream(dir / "empty.a") << "!<arch>\n"; // as glibc's libdl.a
	const Result r = audit_cmd({dir / "empty.a"});
	EXPECT_EQ(r.rc, 0) << r.err;
	EXPECT_EQ(r.out, dir / "empty.a" + ": no ELF object\n");
}

TEST(BadInput, ThinArchive)
{
	TempDir dir;
	std::ofstream(dir / "thin.a") << "!<thin>\n";
	expect_one_line_error(audit_cmd({dir / "thin.a"}), "thin archive");
}

TEST(BadInput, Empty)
{
	TempDir dir;
	std::ofstream(dir / "empty").flush();
	expect_one_line_error(audit_cmd({dir / "empty"}), ": empty file");
}

TEST(BadInput, Directory)
{
	TempDir dir;
	fs::create_directory(dir / "sub");
	expect_one_line_error(audit_cmd({dir / "sub"}), ": Is a directory");
}

TEST(BadInput, Missing)
{
	TempDir dir;
	expect_one_line_error(audit_cmd({dir / "missing"}), "missing: No such file or directory");
}

TEST(BadInput, Unreadable)
{
	if (geteuid() == 0) GTEST_SKIP() << "root can read mode-000 files (see UnreadableAsNobody)";
	TempDir dir;
	std::ofstream(dir / "secret") << "x";
	chmod((dir / "secret").c_str(), 0);
	expect_one_line_error(audit_cmd({dir / "secret"}), ": Permission denied");
}

// As root, the mode-000 case runs as nobody through setpriv.
TEST(BadInput, UnreadableAsNobody)
{
	if (geteuid() != 0) GTEST_SKIP() << "not root: Unreadable covers it";
	std::string setpriv;
	for (const char *p : {"/usr/bin/setpriv", "/bin/setpriv"})
		if (access(p, X_OK) == 0) setpriv = p;
	if (setpriv.empty()) GTEST_SKIP() << "setpriv not found";
	const std::vector<std::string> as_nobody{setpriv, "--reuid=65534", "--regid=65534",
	                                         "--clear-groups", audit_exe()};
	auto help = as_nobody;
	help.push_back("--help");
	if (run(help).rc != 0) GTEST_SKIP() << "nobody cannot run " << audit_exe();
	TempDir dir;
	std::ofstream(dir / "secret") << "x";
	chmod((dir / "secret").c_str(), 0);
	auto cmd = as_nobody;
	cmd.push_back(dir / "secret");
	expect_one_line_error(run(cmd), ": Permission denied");
}

TEST(BadInput, OneBadFileLeavesNoPartialTable)
{
	FIXTURE(good, "struct_copy_gcc.o", "gcc");
	TempDir dir;
	expect_one_line_error(audit_cmd({good, dir / "missing"}), "No such file or directory");
	expect_one_line_error(audit_cmd({"--json", good, dir / "missing"}), "No such file");
	expect_one_line_error(audit_cmd({"--diff", good, dir / "missing"}), "No such file");
}

TEST(BadInput, UsageErrors)
{
	expect_one_line_error(audit_cmd({}), "no input file");
	expect_one_line_error(audit_cmd({"--bogus", "x"}), "unknown option '--bogus'");
	expect_one_line_error(audit_cmd({"--diff", "x"}), "--diff needs two files");
	expect_one_line_error(audit_cmd({"--top", "many", "x"}), "--top needs a number");
	expect_one_line_error(audit_cmd({"--top"}), "--top needs a number");
}

// A report that cannot be written whole: one line and exit code 2.
TEST(BadInput, FullDisk)
{
	const Result r = run({"/bin/sh", "-c", "exec \"$0\" \"$1\" >/dev/full", audit_exe(), "/proc/self/exe"});
	EXPECT_EQ(r.rc, 2);
	EXPECT_EQ(r.err, "uarch-audit: cannot write standard output\n");
}

TEST(Command, Help)
{
	const Result r = audit_cmd({"--help"});
	EXPECT_EQ(r.rc, 0);
	EXPECT_EQ(r.out.rfind("usage: uarch-audit", 0), 0u) << r.out;
	EXPECT_EQ(r.err, "");
}

} // namespace
