#include "kubeslurm/slurm/dependency.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

// Slurm 22.05's sbatch sends --dependency unchecked; slurmctld parses it in
// update_job_dependency (src/slurmctld/job_scheduler.c) and prints it with _depend_list2str.

namespace kubeslurm::slurm {
namespace {

DependencyTarget job(std::uint64_t id, std::uint32_t delay = 0) {
  return {id, std::nullopt, delay};
}
DependencyTarget task(std::uint64_t id, std::int64_t task, std::uint32_t delay = 0) {
  return {id, task, delay};
}
DependencyTerm term(DependencyType type, std::vector<DependencyTarget> targets) {
  return {type, std::move(targets)};
}
DependencyTerm singleton() { return {DependencyType::kSingleton, {}}; }

struct ParseCase {
  std::string input;
  DependencySpec expected;
  std::string pins;
};

TEST(ParseDependencyTest, AcceptsSlurmsForms) {
  using T = DependencyType;
  const std::vector<ParseCase> cases = {
      {"afterok:9", {{term(T::kAfterOk, {job(9)})}, false}, "reference line 189"},
      {"afterok:20:21,afterany:23",
       {{term(T::kAfterOk, {job(20), job(21)}), term(T::kAfterAny, {job(23)})}, false},
       "sbatch(1) --dependency: ',' means all"},
      {"afterok:20:21?afterany:23",
       {{term(T::kAfterOk, {job(20), job(21)}), term(T::kAfterAny, {job(23)})}, true},
       "sbatch(1): '?' means any"},
      {"after:5+10", {{term(T::kAfter, {job(5, 10)})}, false}, "sbatch(1): after:job_id+time"},
      {"afterany:1+5:2",
       {{term(T::kAfterAny, {job(1, 5), job(2, 5)})}, false},
       "_parse_dependency_jobid_new never resets depend_time: the delay carries on"},
      {"afterany:1:2+5:3",
       {{term(T::kAfterAny, {job(1), job(2, 5), job(3, 5)})}, false},
       "but not backwards"},
      {"afterok:5_*",
       {{term(T::kAfterOk, {task(5, kAllArrayTasks)})}, false},
       "reference line 197: a whole array"},
      {"afterok:5_3", {{term(T::kAfterOk, {task(5, 3)})}, false}, "reference line 197: one task"},
      {"afterok:5_[1-3]",
       {{term(T::kAfterOk, {task(5, 1), task(5, 2), task(5, 3)})}, false},
       "_xlate_array_dep expands a task list"},
      {"afterok:5_[1,4-5]+10",
       {{term(T::kAfterOk, {task(5, 1), task(5, 4), task(5, 5, 10)})}, false},
       "the delay lands on the last expanded task"},
      {"afterok:5_[0-12:4]",
       {{term(T::kAfterOk, {task(5, 0), task(5, 4), task(5, 8)})}, false},
       "bitfmt2int's stride excludes its end"},
      {"afternotok:11", {{term(T::kAfterNotOk, {job(11)})}, false}, "reference line 197"},
      {"aftercorr:5", {{term(T::kAfterCorr, {job(5)})}, false}, "sbatch(1): aftercorr"},
      {"singleton", {{singleton()}, false}, "sbatch(1): singleton"},
      {"SINGLETON", {{singleton()}, false}, "xstrncasecmp"},
      {"AfterOK:9", {{term(T::kAfterOk, {job(9)})}, false}, "xstrncasecmp"},
      {"singleton,afterok:3",
       {{singleton(), term(T::kAfterOk, {job(3)})}, false},
       "singleton among others"},
      {"12", {{term(T::kAfterAny, {job(12)})}, false}, "the old format: a bare id is afterany"},
      {"12,13",
       {{term(T::kAfterAny, {job(12)}), term(T::kAfterAny, {job(13)})}, false},
       "old format list"},
      {"afterok:3,5",
       {{term(T::kAfterOk, {job(3)}), term(T::kAfterAny, {job(5)})}, false},
       "an old-format id after a typed one"},
      {"afterok:9(unfulfilled)",
       {{term(T::kAfterOk, {job(9)})}, false},
       "scontrol's text parses back; the state is dropped"},
      {"afterok:11(failed),singleton(unfulfilled)",
       {{term(T::kAfterOk, {job(11)}), singleton()}, false},
       "states on several"},
      {"afterok:1:1",
       {{term(T::kAfterOk, {job(1)})}, false},
       "_add_dependency_to_list keeps one of each"},
      {"afterok:1,afterok:1+5", {{term(T::kAfterOk, {job(1)})}, false}, "the first one wins"},
      {"afterok:1,afterany:1",
       {{term(T::kAfterOk, {job(1)}), term(T::kAfterAny, {job(1)})}, false},
       "a different type is a different dependency"},
      {"singleton,singleton", {{singleton()}, false}, "one singleton"},
      {"afterok: 5", {{term(T::kAfterOk, {job(5)})}, false}, "strtol skips white space"},
      {"afterok:+5", {{term(T::kAfterOk, {job(5)})}, false}, "and takes '+'"},
      {"afterok:4294967295", {{term(T::kAfterOk, {job(4294967295)})}, false}, "uint32 job ids"},
      {"", {}, "update_job_dependency: empty clears the dependency"},
      {"0", {}, "so does \"0\""},
  };
  for (const ParseCase& c : cases) {
    const StatusOr<DependencySpec> spec = parseDependency(c.input);
    ASSERT_TRUE(spec.isOk()) << c.input << " (" << c.pins << ")";
    EXPECT_EQ(*spec, c.expected) << c.input << " (" << c.pins << ") gave "
                                 << formatDependency(*spec);
  }
}

TEST(ParseDependencyTest, RejectsWithTheSubmissionError) {
  const std::vector<std::string> invalid = {
      "bogus",
      "afterok",
      "afterok:",
      "afterok:x",
      "afterok:0",
      "afterok:1,",
      "afterok:1?",
      ",afterok:1",
      "afterok:5+",
      "afterok:5+0",
      "afterok:5+-3",
      "afterok:5x",
      "afterok:5 ",
      "5,afterok:3",  // the old format only holds while no ':' follows anywhere
      "5?6",
      "singleton:5",
      "singletonx",
      "afterok:5_",
      "afterok:5_x",
      "afterok:5_[",
      "afterok:5_[]",
      "afterok:5_[1001]",
      "afterok:5_[3-1]",
      "afterok:5_[1-3",
      "afterok:5(failed",
      "after:5+",
      "afterok:4294967296",
      "afterany",
  };
  for (const std::string& input : invalid) {
    const StatusOr<DependencySpec> spec = parseDependency(input);
    ASSERT_FALSE(spec.isOk()) << input;
    EXPECT_EQ(spec.status().message(), "Batch job submission failed: Job dependency problem")
        << input;
  }
}

TEST(ParseDependencyTest, RejectsWhat22_05AcceptsAsGarbage) {
  // Deliberate deviations: 22.05 turns a mix of ',' and '?' into all-'?' (its man page says
  // only one separator may be used; Slurm 25.11 rejects it), ignores text after "+time",
  // wraps negative and oversized ids, reads "5_" as task 0, overflows big delays.
  for (const std::string input :
       {"afterok:1,afterok:2?afterok:3", "afterok:1?afterok:2,afterok:3", "afterok:5+3x",
        "afterok:5+3+4", "afterok:-5", "afterok:5_-1", "after:5+35791395", "afterok:99999999999",
        "afterburstbuffer:5", "expand:5"}) {
    EXPECT_FALSE(parseDependency(input).isOk()) << input;
  }
}

TEST(ParseDependencyTest, BracketTasksHonourMaxArraySize) {
  EXPECT_FALSE(parseDependency("afterok:5_[1001]").isOk());
  EXPECT_TRUE(parseDependency("afterok:5_[1001]", 2000).isOk());
  // Outside brackets there is no such check (_parse_dependency_jobid_new).
  EXPECT_TRUE(parseDependency("afterok:5_5000").isOk());
  EXPECT_TRUE(parseDependency("afterok:5_[3999999]", kMaxMaxArraySize).isOk());
  EXPECT_FALSE(parseDependency("afterok:5_[4000001]", kMaxMaxArraySize).isOk());
  EXPECT_TRUE(parseDependency("afterok:5_[0-12:4]", 13).isOk());
  EXPECT_FALSE(parseDependency("afterok:5_[0-12:4]", 8).isOk());  // task 8 is past it
}

// One object's dependency may name 16,384 jobs and tasks: a sweep's every task, never a
// megabyte of brackets each expanded to MaxArraySize tasks (gigabytes, minutes).
TEST(ParseDependencyTest, BoundsTheJobsAndTasksNamed) {
  const auto ids = [](int first, int last) {
    std::string text = "afterok";
    for (int id = first; id <= last; ++id) text += ":" + std::to_string(id);
    return text;
  };
  EXPECT_EQ(flattenDependency(*parseDependency(ids(1, 16384))).terms.size(), 16384U);
  EXPECT_FALSE(parseDependency(ids(1, 16385)).isOk());
  // Repeats of one target are kept once and cost nothing.
  EXPECT_TRUE(parseDependency(ids(1, 16384) + ":7:7:7").isOk());
  // The same in brackets, across terms.
  EXPECT_TRUE(parseDependency("afterok:5_[0-9999],afterany:6_[0-6383]", 20000).isOk());
  EXPECT_FALSE(parseDependency("afterok:5_[0-9999],afterany:6_[0-6384]", 20000).isOk());
  EXPECT_FALSE(parseDependency("afterok:5_[0-3999999]", kMaxMaxArraySize).isOk());
  EXPECT_TRUE(parseDependency("afterok:5_[0-3999999:1000]", kMaxMaxArraySize).isOk());
  // Brackets count what they name before it is expanded, repeats included.
  EXPECT_FALSE(parseDependency("afterok:5_[0-9999]:5_[0-9999]", 20000).isOk());
  std::string hostile = "afterok";
  for (int id = 1; id <= 70000; ++id) hostile += ":" + std::to_string(id) + "_[0-3999999]";
  EXPECT_FALSE(parseDependency(hostile, kMaxMaxArraySize).isOk());
}

struct FormatCase {
  std::string input;
  std::string expected;
  std::string pins;
};

TEST(FormatDependencyTest, PrintsOneEntryPerTargetAsScontrol) {
  const std::vector<FormatCase> cases = {
      {"afterok:9", "afterok:9", "reference line 195 without its state"},
      {"afterok:5_*", "afterok:5_*", "reference line 197"},
      {"afterok:5_3", "afterok:5_3", "reference line 197"},
      {"afterany:3+10", "afterany:3+10", "_depend_list2str: +minutes"},
      {"afterok:20:21,afterany:23", "afterok:20,afterok:21,afterany:23",
       "each dependency is its own entry"},
      {"afterok:20:21?afterany:23", "afterok:20?afterok:21?afterany:23", "joined by '?'"},
      {"after:1+5:2", "after:1+5,after:2+5", "the carried delay shows on each"},
      {"afterok:5_[1-2]", "afterok:5_1,afterok:5_2", "expanded tasks"},
      {"singleton", "singleton", "singleton"},
      {"12", "afterany:12", "the old format shows its type"},
      {"AFTERNOTOK:11", "afternotok:11", "type names in lower case"},
      {"", "", "no dependency: scontrol shows (null)"},
  };
  for (const FormatCase& c : cases) {
    EXPECT_EQ(formatDependency(*parseDependency(c.input)), c.expected) << c.pins;
  }
}

TEST(FormatDependencyTest, AddsStatesAndHidesFulfilledEntries) {
  using S = DependencyState;
  const DependencySpec one = *parseDependency("afterok:9");
  EXPECT_EQ(formatDependencyWithState(one, {S::kUnfulfilled}), "afterok:9(unfulfilled)");
  EXPECT_EQ(formatDependencyWithState(one, {}), "afterok:9(unfulfilled)");  // defaults
  EXPECT_EQ(formatDependencyWithState(*parseDependency("afterok:11"), {S::kFailed}),
            "afterok:11(failed)");  // reference line 192
  const DependencySpec two = *parseDependency("afterok:1:2,singleton");
  EXPECT_EQ(formatDependencyWithState(two, {S::kFulfilled, S::kUnfulfilled, S::kUnfulfilled}),
            "afterok:2(unfulfilled),singleton(unfulfilled)");
  EXPECT_EQ(formatDependencyWithState(two, {S::kFulfilled, S::kFulfilled, S::kFulfilled}), "");
  const DependencySpec any = *parseDependency("afterok:1?afterok:2");
  EXPECT_EQ(formatDependencyWithState(any, {S::kFailed, S::kUnfulfilled}),
            "afterok:1(failed)?afterok:2(unfulfilled)");
}

TEST(FormatDependencyTest, ParsesBackToTheFlattenedSpec) {
  for (const std::string input : {"afterok:20:21,afterany:23", "after:1+5:2?afterok:3_*?singleton",
                                  "12,13", "afterok:5_[1-3]+2,afternotok:7_4"}) {
    const DependencySpec spec = *parseDependency(input);
    const StatusOr<DependencySpec> again = parseDependency(formatDependency(spec));
    ASSERT_TRUE(again.isOk()) << input;
    EXPECT_EQ(*again, flattenDependency(spec)) << input;
  }
}

TEST(DependencyTypeTest, NamesAreSlurms) {
  EXPECT_EQ(dependencyTypeName(DependencyType::kAfter), "after");
  EXPECT_EQ(dependencyTypeName(DependencyType::kAfterAny), "afterany");
  EXPECT_EQ(dependencyTypeName(DependencyType::kAfterOk), "afterok");
  EXPECT_EQ(dependencyTypeName(DependencyType::kAfterNotOk), "afternotok");
  EXPECT_EQ(dependencyTypeName(DependencyType::kAfterCorr), "aftercorr");
  EXPECT_EQ(dependencyTypeName(DependencyType::kSingleton), "singleton");
}

}  // namespace
}  // namespace kubeslurm::slurm
