#include "kubeslurm/slurm/repeated_counts.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace kubeslurm::slurm {
namespace {

std::string format(const std::vector<std::uint32_t>& counts) {
  return formatRepeatedCounts(counts);
}

// The reference cluster's batch step: 4 nodes x 1 task -> SLURM_TASKS_PER_NODE=1(x4),
// SLURM_JOB_CPUS_PER_NODE=1(x4) (shared/reference/slurm-22.05.md, batch step environment).
TEST(RepeatedCounts, FourEqualNodesAsTheReferenceShows) {
  EXPECT_EQ(format({1, 1, 1, 1}), "1(x4)");
}

// A run of one is the bare value; runs are joined by commas in node order.
TEST(RepeatedCounts, RunsInNodeOrder) {
  EXPECT_EQ(format({8}), "8");
  EXPECT_EQ(format({2, 2, 2, 1}), "2(x3),1");
  EXPECT_EQ(format({1, 2, 1}), "1,2,1");
  EXPECT_EQ(format({}), "");
}

TEST(RepeatedCounts, ParsesWhatItFormats) {
  const std::vector<std::vector<std::uint32_t>> cases = {
      {1}, {1, 1, 1, 1}, {2, 2, 2, 1}, {0, 0, 5}, {4294967295U, 4294967295U}};
  for (const auto& counts : cases) {
    auto parsed = parseRepeatedCounts(format(counts));
    ASSERT_TRUE(parsed.isOk()) << format(counts);
    EXPECT_EQ(*parsed, counts);
  }
}

TEST(RepeatedCounts, RejectsMalformedText) {
  for (const char* text : {"", ",", "1,", "(x2)", "1(x0)", "1(x2", "1(x)", "a", "1(y2)", "-1",
                           "1(x2)(x3)", "4294967296"}) {
    auto parsed = parseRepeatedCounts(text);
    ASSERT_FALSE(parsed.isOk()) << text;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << text;
  }
}

TEST(RepeatedCounts, RefusesHugeExpansions) {
  auto parsed = parseRepeatedCounts("1(x100000000)");
  ASSERT_FALSE(parsed.isOk());
  EXPECT_EQ(parsed.status().code(), StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace kubeslurm::slurm
