// The system profile reader: the file rules (ownership, permissions,
// symlink, size, type), its format, and its precedence against the
// environment. Files are made in a fresh temporary directory.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cstring>
#include <string>
#include "tunables/profile.h"
#include "tunables/tunables.h"

using namespace uarch;

namespace {

class Profile : public ::testing::Test {
protected:
	std::string dir;
	void SetUp() override
	{
		char tmpl[] = "/tmp/uarch-profile-XXXXXX";
		ASSERT_NE(mkdtemp(tmpl), nullptr);
		dir = tmpl;
	}
	void TearDown() override { ASSERT_EQ(system(("rm -rf " + dir).c_str()), 0); }
	std::string file(const char *name, const std::string &text, mode_t mode = 0644)
	{
		std::string p = dir + "/" + name;
		int fd = open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
		EXPECT_GE(fd, 0);
		EXPECT_EQ(write(fd, text.data(), text.size()), ssize_t(text.size()));
		close(fd);
		EXPECT_EQ(chmod(p.c_str(), mode), 0);
		return p;
	}
	std::string read(const std::string &path, bool secure, ProfileStatus *st, const char *exe = nullptr)
	{
		static char buf[profile_max_bytes + 2];
		uint32_t n = read_profile(path.c_str(), secure, exe, buf, st, section);
		return std::string(buf, n);
	}
	char section[profile_section_max + 1];
};

} // namespace

TEST(ProfileRule, OwnerAndMode)
{
	const uint32_t reg = 0100000;
	for (bool secure : {false, true}) {
		EXPECT_TRUE(profile_trusted(0, reg | 0644, secure, 1000));
		EXPECT_TRUE(profile_trusted(0, reg | 0600, secure, 1000));
		EXPECT_FALSE(profile_trusted(0, reg | 0664, secure, 1000));    // group-writable
		EXPECT_FALSE(profile_trusted(0, reg | 0646, secure, 1000));    // world-writable
		EXPECT_FALSE(profile_trusted(1000, reg | 0666, secure, 1000)); // the user's, but writable by all
		EXPECT_FALSE(profile_trusted(1001, reg | 0644, secure, 1000)); // another user's
		EXPECT_FALSE(profile_trusted(0, 0040000 | 0755, secure, 0));   // a directory
	}
	EXPECT_TRUE(profile_trusted(1000, reg | 0644, false, 1000));   // the process's own user
	EXPECT_FALSE(profile_trusted(1000, reg | 0644, true, 1000));   // not under AT_SECURE
}

TEST_F(Profile, FormatCommentsAndLines)
{
	ProfileStatus st;
	std::string p = file("t", "# measured\nrep_movsb_threshold=32K\n\n  \nmemcpy=avx2 # trailing\r\n:::nt_threshold=2M:\n");
	EXPECT_EQ(read(p, false, &st), "rep_movsb_threshold=32K:memcpy=avx2 :nt_threshold=2M");   // blank lines and indentation dropped
	EXPECT_EQ(st, ProfileStatus::applied);
}

TEST_F(Profile, MissingSymlinkDirectoryFifoHuge)
{
	ProfileStatus st;
	EXPECT_EQ(read(dir + "/none", false, &st), "");
	EXPECT_EQ(st, ProfileStatus::absent);
	EXPECT_EQ(read(dir + "/none/deeper", false, &st), "");
	EXPECT_EQ(st, ProfileStatus::absent);

	std::string target = file("target", "memcpy=avx2\n");
	std::string link = dir + "/link";
	ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
	for (bool secure : {false, true}) {
		EXPECT_EQ(read(link, secure, &st), "");
		EXPECT_EQ(st, ProfileStatus::symlink);
	}
	EXPECT_EQ(read(dir, false, &st), "");
	EXPECT_EQ(st, ProfileStatus::not_regular);
	std::string fifo = dir + "/fifo";
	ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
	EXPECT_EQ(read(fifo, false, &st), "");   // and it did not block
	EXPECT_EQ(st, ProfileStatus::not_regular);

	std::string big(profile_max_bytes + 1, 'x');
	big[0] = 'a';
	EXPECT_EQ(read(file("huge", big), false, &st), "");
	EXPECT_EQ(st, ProfileStatus::too_large);
	std::string fits = "memcpy=avx2:" + std::string(profile_max_bytes - 12, '#');
	EXPECT_EQ(read(file("fits", fits), false, &st), "memcpy=avx2");   // the comment dropped, not the file
	EXPECT_EQ(st, ProfileStatus::applied);
}

TEST_F(Profile, NoOtherWriterInAnyProcess)
{
	ProfileStatus st;
	std::string ok = file("ok", "memcpy=avx2\n", 0644);
	for (bool secure : {false, true}) {
		EXPECT_EQ(read(file("g", "memcpy=avx2\n", 0664), secure, &st), "");
		EXPECT_EQ(st, ProfileStatus::untrusted);
		EXPECT_EQ(read(file("w", "memcpy=avx2\n", 0646), secure, &st), "");
		EXPECT_EQ(st, ProfileStatus::untrusted);
	}
	// The process's own file (root's here when run as root): taken outside AT_SECURE.
	EXPECT_EQ(read(ok, false, &st), "memcpy=avx2");
	EXPECT_EQ(st, ProfileStatus::applied);
	if (geteuid() != 0) {
		// Our own file is not root's.
		EXPECT_EQ(read(ok, true, &st), "");
		EXPECT_EQ(st, ProfileStatus::untrusted);
		GTEST_SKIP() << "a root-owned profile needs root to make";
	}
	EXPECT_EQ(read(ok, true, &st), "memcpy=avx2");
	EXPECT_EQ(st, ProfileStatus::applied);
	ASSERT_EQ(chown(ok.c_str(), 65534, 65534), 0);
	for (bool secure : {false, true}) {   // another user's: refused in every process
		EXPECT_EQ(read(ok, secure, &st), "");
		EXPECT_EQ(st, ProfileStatus::untrusted);
	}
}

TEST_F(Profile, EnvironmentOverridesEntryByEntry)
{
	std::string p = file("t", "memcpy=avx2\nrep_stosb_threshold=1M\nbogus\nnt_threshold=zz\n");
	const char *env = "memcpy=baseline:mask=-fsrm";
	const char *input = env;
	size_t len = strlen(env);
	ProfileInfo info;
	static ProfileBuffers bufs;
	prepend_profile(p.c_str(), false, nullptr, &bufs, &input, &len, &info);
	EXPECT_EQ(info.status, ProfileStatus::applied);
	EXPECT_EQ(std::string(input, len), "memcpy=avx2:rep_stosb_threshold=1M:bogus:nt_threshold=zz:memcpy=baseline:mask=-fsrm");
	EXPECT_EQ(info.length, strlen("memcpy=avx2:rep_stosb_threshold=1M:bogus:nt_threshold=zz"));
	static Tunables t;
	parse_tunables(input, len, &t);
	const Entry *e = t.find(Key::memcpy);
	ASSERT_NE(e, nullptr);
	EXPECT_EQ(std::string(t.input + e->value_offset, e->value_length), "baseline");
	EXPECT_GE(e->offset, info.length);                 // from the environment
	e = t.find(Key::rep_stosb_threshold);
	ASSERT_NE(e, nullptr);
	EXPECT_EQ(e->number, 1u << 20);
	EXPECT_LT(e->offset, info.length);                 // from the profile
	EXPECT_EQ(t.find(Key::nt_threshold), nullptr);     // malformed: ignored
	EXPECT_EQ(t.entries[0].verdict, Verdict::overridden);
	EXPECT_EQ(t.entries[2].verdict, Verdict::no_equals);

	// No environment at all; and no profile: the input is untouched.
	input = nullptr;
	len = 0;
	prepend_profile(p.c_str(), false, nullptr, &bufs, &input, &len, &info);
	EXPECT_EQ(std::string(input, len), "memcpy=avx2:rep_stosb_threshold=1M:bogus:nt_threshold=zz");
	input = env;
	len = strlen(env);
	prepend_profile((dir + "/none").c_str(), false, nullptr, &bufs, &input, &len, &info);
	EXPECT_EQ(input, env);
	EXPECT_EQ(info.length, 0u);
	EXPECT_EQ(info.status, ProfileStatus::absent);
}

TEST_F(Profile, TruncationStaysVisible)
{
	std::string p = file("t", "memcpy=avx2\n");
	// An environment value longer than the parser takes: max_input bytes
	// and the non-NUL marker past them, as state.cpp hands it on.
	static char env[Tunables::max_input + 2];
	memset(env, 'a', Tunables::max_input + 1);
	memcpy(env, "memset=baseline:", 16);
	const char *input = env;
	size_t len = Tunables::max_input + 1;
	ProfileInfo info;
	static ProfileBuffers bufs;
	prepend_profile(p.c_str(), false, nullptr, &bufs, &input, &len, &info);
	static Tunables t;
	parse_tunables(input, len, &t);
	EXPECT_EQ(t.entries[t.nentries - 1].verdict, Verdict::truncated);
	EXPECT_NE(t.find(Key::memcpy), nullptr);
	EXPECT_NE(t.find(Key::memset), nullptr);
}

// Per-program sections: the global entries, then those of the section
// named by the executable's file name; other sections are left out.
TEST_F(Profile, SectionsApplyToTheirProgramAlone)
{
	std::string p = file("t", "memcpy=avx2\nnt_threshold=4M\n"
				  "[mariadbd]  # the database server\n"
				  "rep_movsb_threshold=8K\n  memcpy=erms\n"
				  "[redis-server]\nmemset=baseline\n"
				  "[mariadbd]\nidle_spin_ns=500\n");
	ProfileStatus st;
	EXPECT_EQ(read(p, false, &st, "mariadbd"), "memcpy=avx2:nt_threshold=4M:rep_movsb_threshold=8K:memcpy=erms:idle_spin_ns=500");
	EXPECT_EQ(st, ProfileStatus::applied);
	EXPECT_STREQ(section, "mariadbd");
	EXPECT_EQ(read(p, false, &st, "redis-server"), "memcpy=avx2:nt_threshold=4M:memset=baseline");
	EXPECT_STREQ(section, "redis-server");
	EXPECT_EQ(read(p, false, &st, "python3"), "memcpy=avx2:nt_threshold=4M");
	EXPECT_STREQ(section, "");
	EXPECT_EQ(read(p, false, &st, nullptr), "memcpy=avx2:nt_threshold=4M");   // name unknown: global only
	EXPECT_EQ(read(p, false, &st, "mariadb"), "memcpy=avx2:nt_threshold=4M");  // whole names only

	// A section's entry overrides the global one, as a later entry does.
	const char *input = nullptr;
	size_t len = 0;
	ProfileInfo info;
	static ProfileBuffers bufs;
	prepend_profile(p.c_str(), false, "mariadbd", &bufs, &input, &len, &info);
	static Tunables t;
	parse_tunables(input, len, &t);
	const Entry *e = t.find(Key::memcpy);
	ASSERT_NE(e, nullptr);
	EXPECT_EQ(std::string(t.input + e->value_offset, e->value_length), "erms");
	EXPECT_STREQ(info.section, "mariadbd");
}

// Section lines that are not [NAME] go to the parser (which refuses them,
// and uarch-info shows them); the entries under them apply nowhere.
TEST_F(Profile, BadSectionLinesAreRefused)
{
	ProfileStatus st;
	const char *bad[] = {"[]", "[a/b]", "[two words]", "[x", "[x] memcpy=erms", "[a=b]",
			     "[0123456789012345678901234567890123456789012345678901234567890123]"};
	for (const char *line : bad) {
		std::string p = file("t", std::string("memset=avx2\n") + line + "\nmemcpy=erms\n");
		std::string got = read(p, false, &st, "x");
		EXPECT_EQ(got, std::string("memset=avx2:") + line) << line;
		EXPECT_STREQ(section, "") << line;
		static Tunables t;
		parse_tunables(got.c_str(), got.size(), &t);
		EXPECT_EQ(t.find(Key::memcpy), nullptr) << line;
		bool refused = false;
		for (uint32_t i = 0; i < t.nentries; i++)
			refused |= t.entries[i].verdict != Verdict::applied;
		EXPECT_TRUE(refused) << line << ": not refused by the parser";
	}
	// 63 characters is the longest name.
	std::string name(63, 'n');
	std::string p = file("t", "[" + name + "]\nmemcpy=erms\n");
	EXPECT_EQ(read(p, false, &st, name.c_str()), "memcpy=erms");
	EXPECT_EQ(std::string(section), name);
}

TEST(ProfileExe, FileName)
{
	EXPECT_STREQ(exe_name("/usr/sbin/mariadbd"), "mariadbd");
	EXPECT_STREQ(exe_name("./a.out"), "a.out");
	EXPECT_STREQ(exe_name("sh"), "sh");
	EXPECT_EQ(exe_name(nullptr), nullptr);
}
