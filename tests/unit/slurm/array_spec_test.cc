#include "kubeslurm/slurm/array_spec.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

// Slurm 22.05's sbatch sends --array unchecked; slurmctld's _valid_array_inx and
// _parse_array_tok (src/slurmctld/job_mgr.c) accept or reject it, and _create_job_array reads
// the throttle. job_array.html documents the forms.

namespace kubeslurm::slurm {
namespace {

std::vector<std::uint32_t> range(std::uint32_t first, std::uint32_t last, std::uint32_t step = 1) {
  std::vector<std::uint32_t> ids;
  for (std::uint32_t id = first; id <= last; id += step) ids.push_back(id);
  return ids;
}

struct ParseCase {
  std::string input;
  std::vector<std::uint32_t> taskIds;
  std::optional<std::uint32_t> maxRunning;
  std::string pins;
};

TEST(ParseArraySpecTest, AcceptsWhatSlurmctldAccepts) {
  const std::vector<ParseCase> cases = {
      {"0-31", range(0, 31), std::nullopt, "job_array.html: --array=0-31"},
      {"1,3,5,7", {1, 3, 5, 7}, std::nullopt, "job_array.html: --array=1,3,5,7"},
      {"1-7:2", {1, 3, 5, 7}, std::nullopt, "job_array.html: --array=1-7:2"},
      {"0-15%4", range(0, 15), 4, "job_array.html: --array=0-15%4"},
      {"0-7%2", range(0, 7), 2, "reference line 172: --array=0-7%2"},
      {"0-999", range(0, 999), std::nullopt, "the largest range under MaxArraySize=1001"},
      {"1,3,5-9", {1, 3, 5, 6, 7, 8, 9}, std::nullopt, "single ids and ranges mix"},
      {"0-15:4", {0, 4, 8, 12}, std::nullopt, "a step stops at the last id reached"},
      {"3,1,3", {1, 3}, std::nullopt, "ids are a set: sorted, unique"},
      {"1000", {1000}, std::nullopt, "MaxArraySize - 1 is the largest id"},
      {"[1-5]", range(1, 5), std::nullopt, "_parse_array_tok strips '[' and ']'"},
      {"[1-5]%2", range(1, 5), 2, "brackets then a throttle"},
      {",1,,3,", {1, 3}, std::nullopt, "strtok skips empty tokens"},
      {" 5", {5}, std::nullopt, "strtol skips leading white space"},
      {"+5", {5}, std::nullopt, "and takes a '+' sign"},
      {"1- 5", range(1, 5), std::nullopt, "for the range end too"},
      {"0-", {0}, std::nullopt, "strtol of an empty string is 0: '0-' is 0-0"},
      {"%5", {0}, 5, "an empty number is 0, so '%5' is task 0 with throttle 5"},
      {"1%2,5", {1, 5}, 2, "text after '%' in a token is ignored"},
      {"0-7%2%3", range(0, 7), 2, "the throttle is atoi after the first '%'"},
      {"0-7%0", range(0, 7), std::nullopt, "throttle 0 means none"},
      {"0-7%x", range(0, 7), std::nullopt, "a throttle that is no number means none"},
      {"0-7%-3", range(0, 7), std::nullopt, "a negative throttle means none"},
      {"1-5:1000", {1}, std::nullopt, "the step must be below MaxArraySize"},
  };
  for (const ParseCase& c : cases) {
    const StatusOr<ArraySpec> spec = parseArraySpec(c.input);
    ASSERT_TRUE(spec.isOk()) << c.input << " (" << c.pins << ")";
    EXPECT_EQ(spec->taskIds, c.taskIds) << c.input << " (" << c.pins << ")";
    EXPECT_EQ(spec->maxRunning, c.maxRunning) << c.input << " (" << c.pins << ")";
  }
}

TEST(ParseArraySpecTest, RejectsWithTheSubmissionError) {
  // sbatch prints "sbatch: error: Batch job submission failed: Invalid job array
  // specification" (ESLURM_INVALID_ARRAY) once slurmctld refuses the spec.
  const std::vector<std::string> invalid = {
      "1001",     "0-1001", "999-1000000", "abc",  "-1",   "5-3", "1-5:0",  "1-5:-1",
      "1-5:1001", "1:5",    "1-5x",        "1 ,3", "0x10", "[[1", "1-5:2x", "99999999999999999999",
      "5-1,0",
  };
  for (const std::string& input : invalid) {
    const StatusOr<ArraySpec> spec = parseArraySpec(input);
    ASSERT_FALSE(spec.isOk()) << input;
    EXPECT_EQ(spec.status().message(),
              "Batch job submission failed: Invalid job array specification");
  }
}

TEST(ParseArraySpecTest, RejectsSpecsWithoutTasksUnlikeSlurm) {
  // Slurm submits an ordinary job for these; a deliberate deviation.
  for (const std::string input : {"", ",", ",,,"}) EXPECT_FALSE(parseArraySpec(input).isOk());
}

TEST(ParseArraySpecTest, HonoursMaxArraySize) {
  EXPECT_EQ(parseArraySpec("0-4000", 4001)->taskIds.size(), 4001U);
  EXPECT_FALSE(parseArraySpec("4001", 4001).isOk());
  EXPECT_FALSE(parseArraySpec("0", 0).isOk());  // MaxArraySize=0 disables arrays
  EXPECT_EQ(parseArraySpec("0-9", 10)->taskIds, range(0, 9));
  EXPECT_FALSE(parseArraySpec("0-9", 9).isOk());
  // The largest slurm.conf allows, as objects decode: a larger argument is that one.
  EXPECT_EQ(parseArraySpec("4000000", kMaxMaxArraySize)->taskIds,
            std::vector<std::uint32_t>{4000000});
  EXPECT_FALSE(parseArraySpec("4000001", kMaxMaxArraySize).isOk());
  EXPECT_FALSE(parseArraySpec("4000001", 4294967295U).isOk());
  const auto spread = parseArraySpec("3999990-3999999:3,7,2%4", kMaxMaxArraySize);
  ASSERT_TRUE(spread.isOk());
  EXPECT_EQ(spread->taskIds,
            (std::vector<std::uint32_t>{2, 7, 3999990, 3999993, 3999996, 3999999}));
  EXPECT_EQ(spread->maxRunning, 4U);
}

// One object's --array text may cost what the largest array costs, not that times every token
// it repeats (a megabyte of "0-4000000," would walk four hundred billion ids).
TEST(ParseArraySpecTest, BoundsTheIdsTheTokensName) {
  std::string repeated;
  for (int i = 0; i < 100000; ++i) repeated += "0-3999999,";
  EXPECT_FALSE(parseArraySpec(repeated, kMaxMaxArraySize).isOk());
  // Twice the largest array, repeats counted, reads as Slurm reads it; one id more does not.
  EXPECT_EQ(parseArraySpec("0-4000000,0-4000000", kMaxMaxArraySize)->taskIds.size(), 4000001U);
  EXPECT_FALSE(parseArraySpec("0-4000000,0-4000000,7", kMaxMaxArraySize).isOk());
  // A step counts the ids it names, not the span.
  EXPECT_EQ(parseArraySpec("0-3999999:2,0-4000000,0-2000000", kMaxMaxArraySize)->taskIds.size(),
            4000001U);
  EXPECT_FALSE(parseArraySpec("0-3999999:2,0-4000000,0-2000001", kMaxMaxArraySize).isOk());
}

// A reader that holds what it parses passes the cluster's limit as a count of tasks, whatever
// their ids' bound: distinct tasks count, repeats do not.
TEST(ParseArraySpecTest, BoundsTheDistinctTasks) {
  EXPECT_EQ(parseArraySpec("0-49,0-49,10", kMaxMaxArraySize, 50)->taskIds.size(), 50U);
  EXPECT_FALSE(parseArraySpec("0-50", kMaxMaxArraySize, 50).isOk());
  EXPECT_FALSE(parseArraySpec("0-49,3999999", kMaxMaxArraySize, 50).isOk());
  EXPECT_EQ(parseArraySpec("3999999%2", kMaxMaxArraySize, 1)->taskIds,
            std::vector<std::uint32_t>{3999999});
}

struct FormatCase {
  std::vector<std::uint32_t> taskIds;
  std::optional<std::uint32_t> maxRunning;
  std::string expected;
  std::string pins;
};

TEST(FormatArrayTasksTest, PrintsPendingTasksAsXlateArrayTaskStr) {
  const std::vector<FormatCase> cases = {
      {range(2, 7), 2, "2-7%2", "reference lines 176 and 181: 6_[2-7%2], ArrayTaskId=2-7%2"},
      {{1, 3, 5, 6, 7, 8, 9}, std::nullopt, "1,3,5-9", "bit_fmt ranges"},
      {{5, 6}, std::nullopt, "5-6", "two adjacent ids are a range"},
      {{7}, std::nullopt, "7", "one id"},
      {{0, 4, 8, 12}, std::nullopt, "0,4,8,12", "a stride needs more than five tasks"},
      {range(0, 10, 2), std::nullopt, "0,2,4,6,8,10", "and to span more than ten ids"},
      {range(0, 12, 2), std::nullopt, "0-12:2", "a regular stride"},
      {range(0, 30, 3), 4, "0-30:3%4", "a stride with a throttle"},
      {{0, 2, 4, 6, 8, 10, 13}, std::nullopt, "0,2,4,6,8,10,13", "an irregular gap"},
      {{9, 1, 5, 1}, std::nullopt, "1,5,9", "input order and duplicates do not matter"},
      {{}, std::nullopt, "", "nothing pending"},
      {range(0, 3), 0, "0-3", "throttle 0 is none"},
  };
  for (const FormatCase& c : cases) {
    EXPECT_EQ(formatArrayTasks(c.taskIds, c.maxRunning), c.expected) << c.pins;
  }
}

TEST(FormatArrayTasksTest, CutsLongListsAtSlurmBitstrLen) {
  // Pairs 0-1,3-4,6-7,... never form a stride; the full text is far over 64 bytes.
  std::vector<std::uint32_t> ids;
  for (std::uint32_t i = 0; i < 300; i += 3) {
    ids.push_back(i);
    ids.push_back(i + 1);
  }
  const std::string full = formatArrayTasks(ids, std::nullopt, 0);
  ASSERT_GT(full.size(), 64U);
  EXPECT_EQ(full.substr(0, 19), "0-1,3-4,6-7,9-10,12");
  const std::string cut = formatArrayTasks(ids, 3);
  EXPECT_EQ(cut, full.substr(0, 60) + "...%3");
  // 61 characters fit in the 64-byte buffer untouched; from 62 on the text is cut.
  std::vector<std::uint32_t> fits = {10, 11};
  std::vector<std::uint32_t> overflows = {1, 3, 10};
  for (std::uint32_t i = 0; i < 14; ++i) {
    fits.push_back(100 + 7 * i + i % 2);
    overflows.push_back(100 + 7 * i + i % 2);
  }
  EXPECT_EQ(formatArrayTasks(fits, std::nullopt),
            "10-11,100,108,114,122,128,136,142,150,156,164,170,178,184,192");
  EXPECT_EQ(formatArrayTasks(overflows, std::nullopt),
            "1,3,10,100,108,114,122,128,136,142,150,156,164,170,178,184,1...");
  EXPECT_EQ(formatArrayTasks(ids, std::nullopt, 16), full.substr(0, 12) + "...");
}

TEST(ArrayTaskStepEnvTest, ReadsTheNumberAfterTheFirstColon) {
  // _create_job_array: SLURM_ARRAY_TASK_STEP=atoi(after the first ':'), else 1.
  EXPECT_EQ(arrayTaskStepEnv("0-15:4"), 4);
  EXPECT_EQ(arrayTaskStepEnv("0-7%2"), 1);  // reference line 185: SLURM_ARRAY_TASK_STEP=1
  EXPECT_EQ(arrayTaskStepEnv("1,3-9:2%4"), 2);
}

}  // namespace
}  // namespace kubeslurm::slurm
