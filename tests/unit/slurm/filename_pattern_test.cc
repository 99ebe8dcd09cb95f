#include "kubeslurm/slurm/filename_pattern.h"

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

// slurmstepd names the batch step's files with _create_batch_fname
// (src/slurmd/common/fname.c, 22.05); sbatch(1) "filename pattern" documents the letters.

namespace kubeslurm::slurm {
namespace {

FilenamePatternValues plainJob() {
  FilenamePatternValues values;
  values.jobId = 42;
  values.jobName = "train";
  values.nodeName = "gpu-node-001";
  values.nodeId = 0;
  values.taskId = 0;
  values.userName = "alice";
  return values;
}

FilenamePatternValues arrayTask() {
  // reference line 185: task 0 of array 6 runs as job 7.
  FilenamePatternValues values = plainJob();
  values.jobId = 7;
  values.arrayJobId = 6;
  values.arrayTaskId = 0;
  values.jobName = "arr";
  return values;
}

struct PatternCase {
  std::string pattern;
  std::string expected;
  std::string pins;
};

TEST(ExpandFilenamePatternTest, ExpandsEachLetterAsSlurmstepd) {
  const std::vector<PatternCase> cases = {
      {"slurm-%J.out", "slurm-42.out", "the default name; reference line 121: slurm-2.out"},
      {"%j", "42", "sbatch(1): %j jobid"},
      {"%J", "42", "%J is jobid.stepid, just jobid for the batch step"},
      {"%A", "42", "%A outside an array is the job id"},
      {"%a", "4294967294", "%a outside an array prints NO_VAL"},
      {"%x.out", "train.out", "%x job name"},
      {"%N", "gpu-node-001", "%N short hostname"},
      {"%n-%t", "0-0", "%n node id, %t task id"},
      {"%u", "alice", "%u user name"},
      {"%s", "batch", "%s of the batch step"},
      {"%4j", "0042", "sbatch(1): a number zero-pads"},
      {"%1j", "42", "a narrower width changes nothing"},
      {"%10j", "0000000042", "MAX_WIDTH is 10"},
      {"%12j", "0000000042", "wider is clamped to 10"},
      {"%4x", "train", "width is ignored for text"},
      {"%3n", "000", "numbers pad"},
      {"%%", "%", "sbatch(1): %% is %"},
      {"%%j", "%j", "an escaped % does not start a letter"},
      {"%%%j", "%42", "%% then %j"},
      {"100%", "100%", "a trailing % stays"},
      {"%z", "%z", "unknown letters stay as typed"},
      {"%4z", "4z", "after a width Slurm keeps only its last digit"},
      {"%12z", "2z", "likewise"},
      {"abc%12", "abc2", "a width at the end"},
      {"%4%j", "442", "a width, then a new conversion"},
      {"out\\%j", "out%j", "sbatch(1): a backslash turns expansion off"},
      {"a\\\\b%j", "a\\b%j", "a doubled backslash keeps one"},
      {"0", "0", "a bare number is one task's file: task 0's here"},
      {"5", "/dev/null", "other tasks' numbers go to /dev/null (fname_create)"},
      {"", "", "nothing"},
  };
  for (const PatternCase& c : cases) {
    EXPECT_EQ(expandFilenamePattern(c.pattern, plainJob()), c.expected)
        << c.pattern << " (" << c.pins << ")";
  }
}

TEST(ExpandFilenamePatternTest, ExpandsArrayTasks) {
  EXPECT_EQ(expandFilenamePattern("arr-%A_%a.out", arrayTask()), "arr-6_0.out");  // line 185
  EXPECT_EQ(expandFilenamePattern("slurm-%A_%a.out", arrayTask()), "slurm-6_0.out");
  EXPECT_EQ(expandFilenamePattern("%j", arrayTask()), "7");
  EXPECT_EQ(expandFilenamePattern("%3a", arrayTask()), "000");
  FilenamePatternValues noArrayId = arrayTask();
  noArrayId.arrayJobId.reset();
  EXPECT_EQ(expandFilenamePattern("%A", noArrayId), "7");
}

TEST(ExpandFilenamePatternTest, ExpandsStepIds) {
  FilenamePatternValues step = plainJob();
  step.stepId = 3;
  EXPECT_EQ(expandFilenamePattern("%J", step), "42.3");  // sbatch(1): e.g. "128.0"
  EXPECT_EQ(expandFilenamePattern("%s", step), "3");
  EXPECT_EQ(expandFilenamePattern("%2s", step), "03");
}

TEST(DefaultOutputPatternTest, IsSlurmstepdsDefault) {
  EXPECT_EQ(defaultOutputPattern(false), "slurm-%J.out");
  EXPECT_EQ(defaultOutputPattern(true), "slurm-%A_%a.out");  // job_array.html
}

TEST(FormatScontrolStdioPathTest, PrintsStdOutAsScontrolShowJob) {
  FilenamePatternValues job2 = plainJob();
  job2.jobId = 2;
  job2.jobName = "x";
  // reference lines 119 and 121: StdErr=/StdOut=/home/alice/jobs/slurm-2.out
  EXPECT_EQ(formatScontrolStdioPath(std::nullopt, job2, "/home/alice/jobs"),
            "/home/alice/jobs/slurm-2.out");
  EXPECT_EQ(formatScontrolStdioPath(std::nullopt, arrayTask(), "/w"), "/w/slurm-6_0.out");
  EXPECT_EQ(formatScontrolStdioPath("arr-%A_%a.out", arrayTask(), "/w"), "/w/arr-6_0.out");
  EXPECT_EQ(formatScontrolStdioPath("/abs/%j-%x-%u.log", job2, "/w"), "/abs/2-x-alice.log");
  // _fname_format knows no width, no "%%" and no %N.
  EXPECT_EQ(formatScontrolStdioPath("%4j", job2, "/w"), "/w/%4j");
  EXPECT_EQ(formatScontrolStdioPath("%%j", job2, "/w"), "/w/%2");
  EXPECT_EQ(formatScontrolStdioPath("%N", job2, "/w"), "/w/%N");
}

}  // namespace
}  // namespace kubeslurm::slurm
