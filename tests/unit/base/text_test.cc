// The shared ASCII case-insensitive comparisons (strcasecmp/strncasecmp in the C locale).
#include "kubeslurm/base/text.h"

#include <gtest/gtest.h>

namespace kubeslurm {
namespace {

TEST(Text, EqualsIgnoreCaseFoldsAsciiOnly) {
  EXPECT_TRUE(equalsIgnoreCase("REQUEUE", "requeue"));
  EXPECT_TRUE(equalsIgnoreCase("", ""));
  EXPECT_FALSE(equalsIgnoreCase("REQUEUE", "requeu"));
  EXPECT_FALSE(equalsIgnoreCase("a", "b"));
  EXPECT_FALSE(equalsIgnoreCase("\xc3\x89", "\xc3\xa9"));  // É, é: not ASCII, not folded
  EXPECT_FALSE(equalsIgnoreCase("@", "`"));                // 'A' - 1 and 'a' - 1
}

TEST(Text, StartsWithIgnoreCase) {
  EXPECT_TRUE(startsWithIgnoreCase("AllocGRES", "alloc"));
  EXPECT_TRUE(startsWithIgnoreCase("x", ""));
  EXPECT_FALSE(startsWithIgnoreCase("al", "alloc"));
  EXPECT_FALSE(startsWithIgnoreCase("AllocGRES", "gres"));
}

// What the C locale's tolower does, byte by byte: the Slurm commands' keywords, GPU types.
TEST(Text, LowercaseAsciiFoldsAZOnly) {
  EXPECT_EQ(lowercaseAscii("NVIDIA-H100-80GB_HBM3"), "nvidia-h100-80gb_hbm3");
  EXPECT_EQ(lowercaseAscii(""), "");
  EXPECT_EQ(lowercaseAscii("@[`{"), "@[`{");                    // just outside A-Z and a-z
  EXPECT_EQ(lowercaseAscii("\xc3\x89T\xff"), "\xc3\x89t\xff");  // non-ASCII bytes kept
}

}  // namespace
}  // namespace kubeslurm
