// Codegen: the primitives in uarch.h must reach the object file whatever
// the flags (seed 000: clang -mno-sse drops __builtin_prefetch without a
// word). codegen_tu.c is compiled here, at test time, by each compiler meson
// found, and its disassembly counted.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>
#include <string>
#include "tools.h"

using namespace sync_test;

namespace {

struct Compiler {
	const char *name;   // for messages and skips
	std::string path;   // empty: not found
	std::string flags;  // target and ISA flags
	std::string objdump;
};

std::string tmpdir()
{
	static std::string dir = [] {
		const char *t = getenv("TMPDIR");
		std::string templ = std::string(t && *t ? t : "/tmp") + "/uarch-sync-codegen-XXXXXX";
		char *d = mkdtemp(templ.data());
		return d ? std::string(d) : std::string();
	}();
	return dir;
}

// Compiles codegen_tu.c (with the builtins when builtin, and extra flags)
// and returns its instruction counts; fails the test (and returns empty)
// when a step fails.
Counts compile_and_count(const Compiler &c, bool builtin, const std::string &extra = "")
{
	std::string obj = tmpdir() + "/" + c.name + (builtin ? "-builtin" : "-uarch") + ".o";
	std::string cmd = quote(c.path) + " " + c.flags + " -O2 -ffreestanding -c " +
			  (builtin ? "-DCODEGEN_BUILTIN " : "") + extra + " " +
			  "-I" + quote(std::string(UARCH_TEST_SOURCE_ROOT) + "/include") + " " +
			  quote(std::string(UARCH_TEST_SOURCE_ROOT) + "/tests/sync/codegen_tu.c") +
			  " -o " + quote(obj);
	std::string out;
	int rc = run(cmd, &out);
	EXPECT_EQ(rc, 0) << cmd << "\n" << out;
	if (rc)
		return {};
	rc = run(quote(c.objdump) + " -d --no-show-raw-insn " + quote(obj), &out);
	EXPECT_EQ(rc, 0) << out;
	unlink(obj.c_str());
	Counts n = count_all(out);
	printf("[ counts   ] %s%s: %s\n", c.name, builtin ? " (builtins)" : "", show(n).c_str());
	return n;
}

// Skips by name when the compiler or objdump is missing.
#define REQUIRE(c)                                                                          \
	do {                                                                                \
		if ((c).path.empty())                                                       \
			GTEST_SKIP() << (c).name << ": compiler not found";                 \
		if ((c).objdump.empty())                                                    \
			GTEST_SKIP() << (c).name << ": no objdump for its target";          \
		if (tmpdir().empty())                                                       \
			GTEST_SKIP() << (c).name << ": no temporary directory";             \
	} while (0)

const Compiler clang_x86{"clang-x86_64", UARCH_TEST_CLANG, "--target=x86_64-linux-gnu -mno-sse",
			 UARCH_TEST_X86_OBJDUMP};
const Compiler gcc_x86{"gcc-x86_64", UARCH_TEST_X86_GCC, "-mno-sse", UARCH_TEST_X86_OBJDUMP};
const Compiler clang_a64{"clang-aarch64", UARCH_TEST_CLANG, "--target=aarch64-linux-gnu -mgeneral-regs-only",
			 UARCH_TEST_A64_OBJDUMP};
const Compiler gcc_a64{"gcc-aarch64", UARCH_TEST_A64_GCC, "-mgeneral-regs-only", UARCH_TEST_A64_OBJDUMP};

// cg_prefetch and cg_walk prefetch for reading, cg_prefetchw and cg_bump
// for writing, cg_smp_mb and cg_publish have a full barrier: at least two
// of each (a compiler may duplicate a loop body, never drop one).
void expect_x86_uarch(const Counts &n)
{
	EXPECT_GE(get(n, "prefetcht0"), 2);
	EXPECT_GE(get(n, "prefetchw"), 2);
	EXPECT_GE(get(n, "lock"), 2);
	EXPECT_EQ(get(n, "mfence"), 0);
	EXPECT_EQ(get(n, "lock addl"), get(n, "lock")) << "the barrier is lock addl below the red zone";
}

void expect_a64_uarch(const Counts &n)
{
	EXPECT_GE(get(n, "prfm pldl1keep"), 2);
	EXPECT_GE(get(n, "prfm pstl1keep"), 2);
	EXPECT_GE(get(n, "dmb ish"), 2);
}

} // namespace

TEST(Codegen, ClangX86NoSse)
{
	REQUIRE(clang_x86);
	expect_x86_uarch(compile_and_count(clang_x86, false));
}

TEST(Codegen, GccX86NoSse)
{
	REQUIRE(gcc_x86);
	expect_x86_uarch(compile_and_count(gcc_x86, false));
}

// The counting sees a missing prefetch: the builtin form, with the builtin
// defined away, has none, while gcc keeps it as prefetcht0 otherwise.
TEST(Codegen, CountingSeesAMissingPrefetch)
{
	REQUIRE(gcc_x86);
	Counts kept = compile_and_count(gcc_x86, true);
	Counts gone = compile_and_count(gcc_x86, true, "'-D__builtin_prefetch(...)=((void)0)'");
	EXPECT_GT(get(kept, "prefetcht0"), 0) << "gcc dropped __builtin_prefetch under -mno-sse";
	EXPECT_EQ(get(gone, "prefetcht0") + get(gone, "prefetchw"), 0);
}

// Seed 000: under -mno-sse clang 14 drops __builtin_prefetch (both the read
// and the write form). An observation about the compiler, reported, not
// asserted: the day clang keeps them, uarch.h's inline asm is still right
// (ClangX86NoSse above checks that).
TEST(Codegen, BuiltinPrefetchUnderClangNoSse)
{
	REQUIRE(clang_x86);
	REQUIRE(gcc_x86);
	Counts c = compile_and_count(clang_x86, true);
	Counts g = compile_and_count(gcc_x86, true);
	int kept = get(c, "prefetcht0") + get(c, "prefetchw");
	printf("[ seed 000 ] clang -mno-sse %s __builtin_prefetch (%d prefetches; gcc: %d)\n",
	       kept ? "keeps" : "drops", kept, get(g, "prefetcht0") + get(g, "prefetchw"));
	// For the record (it differs across versions): clang 14 turns a
	// seq_cst fence into mfence even here, gcc 12 into lock orq $0,(%rsp),
	// which the next ret or reload of that slot waits for.
	printf("[ fences   ] seq_cst fence: clang mfence=%d lock=%d, gcc mfence=%d lock=%d\n",
	       get(c, "mfence"), get(c, "lock"), get(g, "mfence"), get(g, "lock"));
}

TEST(Codegen, GccAarch64GeneralRegsOnly)
{
	REQUIRE(gcc_a64);
	expect_a64_uarch(compile_and_count(gcc_a64, false));
}

TEST(Codegen, ClangAarch64GeneralRegsOnly)
{
	REQUIRE(clang_a64);
	expect_a64_uarch(compile_and_count(clang_a64, false));
}

// The exported functions and variants in the built library carry the same
// instructions (the library is built with the project's compiler and flags).
TEST(Codegen, LibraryVariants)
{
#if !defined(__x86_64__)
	GTEST_SKIP() << "library variants: checked on x86-64 only";
#else
	if (std::string(UARCH_TEST_X86_OBJDUMP).empty())
		GTEST_SKIP() << "library variants: objdump not found";
	std::string out;
	ASSERT_EQ(run(quote(UARCH_TEST_X86_OBJDUMP) + " -d --no-show-raw-insn " + quote(UARCH_TEST_LIBUARCH), &out), 0)
		<< out;
	auto m = count_by_symbol(out);
	if (!m.count("uarch_x86_64_smp_mb_lock_add"))
		GTEST_SKIP() << "library variants: libuarch.so has no symbol table (stripped)";
	auto fn = [&](const char *s) { return m.count(s) ? m[s] : Counts{}; };
	EXPECT_EQ(get(fn("uarch_x86_64_smp_mb_lock_add"), "lock addl"), 1);
	EXPECT_EQ(get(fn("uarch_x86_64_smp_mb_lock_add"), "mfence"), 0);
	EXPECT_EQ(get(fn("uarch_x86_64_smp_mb_mfence"), "mfence"), 1);
	EXPECT_GE(get(fn("uarch_x86_64_prefetch_range_t0"), "prefetcht0"), 1);
	EXPECT_EQ(get(fn("uarch_x86_64_prefetchw_w"), "prefetchw"), 1);
	EXPECT_EQ(get(fn("uarch_x86_64_prefetchw_t0"), "prefetcht0"), 1);
	EXPECT_EQ(get(fn("uarch_prefetch"), "prefetcht0"), 1);
	EXPECT_EQ(get(fn("uarch_cpu_relax"), "pause"), 1);
	// The portable variant uses __builtin_prefetch: it survives only
	// because the library is not built with -mno-sse.
	EXPECT_GE(get(fn("uarch_generic_prefetch_range"), "prefetcht0"), 1);
#endif
}
