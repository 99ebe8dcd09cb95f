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

}  // namespace
}  // namespace kubeslurm
