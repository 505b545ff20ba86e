// uarch-tune's edits of the profile keep what they do not touch: the
// global entries replaced, sections kept; one section set, added or
// removed, the rest kept byte for byte.
#include <gtest/gtest.h>
#include "profile_edit.h"

using namespace uarch::tune;

TEST(ProfileEdit, SectionNames)
{
	EXPECT_TRUE(section_name_ok("mariadbd"));
	EXPECT_TRUE(section_name_ok("redis-server"));
	EXPECT_TRUE(section_name_ok(std::string(63, 'x')));
	for (const char *bad : {"", "a/b", "a b", "a:b", "a=b", "[a", "a]", "a#b"})
		EXPECT_FALSE(section_name_ok(bad)) << bad;
	EXPECT_FALSE(section_name_ok(std::string(64, 'x')));
}

TEST(ProfileEdit, GlobalReplacedSectionsKept)
{
	const std::string old = "# uarch-tune on a machine\nnt_threshold=8M\n[mariadbd]\nrep_movsb_threshold=8K\n";
	EXPECT_EQ(with_global(old, "# again\nnt_threshold=16M\n"),
		  "# again\nnt_threshold=16M\n[mariadbd]\nrep_movsb_threshold=8K\n");
	EXPECT_EQ(with_global("", "a=1"), "a=1\n");
}

TEST(ProfileEdit, SectionSetAddedRemoved)
{
	const std::string old = "nt_threshold=8M\n[mariadbd]\nrep_movsb_threshold=8K\n# kept\n[redis-server]\nmemset=avx2\n";
	EXPECT_EQ(with_section(old, "mariadbd", "rep_movsb_threshold=2K:memcpy=erms"),
		  "nt_threshold=8M\n[mariadbd]\nrep_movsb_threshold=2K\nmemcpy=erms\n[redis-server]\nmemset=avx2\n");
	EXPECT_EQ(with_section(old, "python3", "memcpy=avx2"), old + "[python3]\nmemcpy=avx2\n");
	EXPECT_EQ(with_section(old, "mariadbd", ""), "nt_threshold=8M\n[redis-server]\nmemset=avx2\n");
	EXPECT_EQ(with_section(old, "nginx", ""), old);   // nothing to remove
	EXPECT_EQ(with_section("", "x", "a=1"), "[x]\na=1\n");
	EXPECT_EQ(with_section("a=1", "x", "b=2"), "a=1\n[x]\nb=2\n");
}
