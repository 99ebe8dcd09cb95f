#include "kubeslurm/sim/swf.h"

#include <gtest/gtest.h>

namespace kubeslurm::sim {
namespace {

// The first lines of traces/lublin_256.swf, verbatim.
constexpr std::string_view kLublinHead =
    "; Version: 2\n"
    "; Acknowledge: Uri Lublin, Hebrew University\n"
    "; Information: http://www.cs.huji.ac.il/labs/parallel/workload\n"
    "; MaxJobs: 10000\n"
    "; MaxRecords: 10000\n"
    "; MaxNodes: 256\n"
    "; MaxRuntime: 162754\n"
    "1    5094 -1   12072  16 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n"
    "2    5170 -1       2   1 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n"
    "3    6742 -1   24089   1 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n"
    "4    7287 -1    9053 128 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n";

TEST(SwfTest, ReadsTheLublinHeaderAndJobs) {
  auto trace = parseSwf(kLublinHead);
  ASSERT_TRUE(trace.isOk()) << trace.status().toString();
  EXPECT_EQ(trace->format, TraceFormat::kSwf);
  EXPECT_EQ(trace->maxNodes, 256U);
  EXPECT_EQ(trace->maxProcs, 0U);
  ASSERT_EQ(trace->jobs.size(), 4U);
  const TraceJob& first = trace->jobs[0];
  EXPECT_EQ(first.id, 1U);
  EXPECT_EQ(first.submit, 5094);
  EXPECT_EQ(first.runTime, 12072);
  EXPECT_EQ(first.procs, 16U);
  EXPECT_EQ(first.traceWait, -1);
  EXPECT_FALSE(first.requestedTime.has_value());
  EXPECT_EQ(first.status, 1);
  EXPECT_EQ(first.user, "");  // -1: unknown
  EXPECT_EQ(first.queue, "0");
  EXPECT_EQ(trace->jobs[3].procs, 128U);
  EXPECT_EQ(trace->skipped, 0U);
}

TEST(SwfTest, PrefersRequestedProcessorsAndTimeWhenPresent) {
  auto trace = parseSwf("7 100 5 60 4 -1 -1 8 3600 -1 1 12 3 -1 2 1 -1 -1\n");
  ASSERT_TRUE(trace.isOk());
  ASSERT_EQ(trace->jobs.size(), 1U);
  EXPECT_EQ(trace->jobs[0].procs, 8U);
  EXPECT_EQ(trace->jobs[0].requestedTime, 3600);
  EXPECT_EQ(trace->jobs[0].traceWait, 5);
  EXPECT_EQ(trace->jobs[0].user, "12");
  EXPECT_EQ(trace->jobs[0].group, "3");
  EXPECT_EQ(trace->jobs[0].queue, "2");
  EXPECT_EQ(trace->jobs[0].partition, "1");
}

TEST(SwfTest, ReadsMaxProcsAndAcceptsFractionalAverages) {
  auto trace = parseSwf(
      "; MaxProcs: 128\n;MaxNodes:64\n1 0 0 10 2 3.75 1024.5 -1 -1 -1 1 1 1 1 1 1 -1 -1\n");
  ASSERT_TRUE(trace.isOk()) << trace.status().toString();
  EXPECT_EQ(trace->maxProcs, 128U);
  EXPECT_EQ(trace->maxNodes, 64U);
  EXPECT_EQ(trace->jobs.size(), 1U);
}

TEST(SwfTest, SkipsJobsThatNeverRanOrHaveNoSizeAndSaysWhy) {
  auto trace = parseSwf(
      "1 0 -1 -1 4 -1 -1 -1 -1 -1 5 -1 -1 -1 0 -1 -1 -1\n"
      "2 0 -1 10 -1 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n"
      "3 0 -1 10 1 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n");
  ASSERT_TRUE(trace.isOk());
  ASSERT_EQ(trace->jobs.size(), 1U);
  EXPECT_EQ(trace->jobs[0].id, 3U);
  EXPECT_EQ(trace->skipped, 2U);
  ASSERT_EQ(trace->notes.size(), 2U);
  EXPECT_EQ(trace->notes[0], "1 jobs skipped: run time -1 (never ran)");
  EXPECT_EQ(trace->notes[1], "1 jobs skipped: no processor count");
}

TEST(SwfTest, ToleratesBlankLinesTabsAndCrlf) {
  auto trace = parseSwf("\r\n\t1\t0\t-1\t5\t1 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\r\n\n");
  ASSERT_TRUE(trace.isOk()) << trace.status().toString();
  EXPECT_EQ(trace->jobs.size(), 1U);
}

TEST(SwfTest, ErrorNamesTheLineAndTheFieldCount) {
  auto trace = parseSwf("; header\n1 0 -1 5 1 -1 -1\n");
  ASSERT_FALSE(trace.isOk());
  EXPECT_EQ(trace.status().message(), "swf line 2: expected 18 fields, got 7");
}

TEST(SwfTest, ErrorNamesTheFieldThatIsNotANumber) {
  auto trace = parseSwf("1 0 -1 five 1 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n");
  ASSERT_FALSE(trace.isOk());
  EXPECT_EQ(trace.status().message(), "swf line 1: field 4 is not a number: \"five\"");
}

TEST(SwfTest, RejectsNegativeJobIds) {
  EXPECT_FALSE(parseSwf("-3 0 -1 5 1 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n").isOk());
}

TEST(SwfTest, MaxRecordsReadsOnlyTheFirstJobs) {
  auto trace = parseSwf(kLublinHead, {.maxRecords = 2});
  ASSERT_TRUE(trace.isOk());
  ASSERT_EQ(trace->jobs.size(), 2U);
  EXPECT_EQ(trace->jobs[1].id, 2U);
}

TEST(SwfTest, EmptyTextIsAnEmptyTrace) {
  auto trace = parseSwf("");
  ASSERT_TRUE(trace.isOk());
  EXPECT_TRUE(trace->jobs.empty());
}

}  // namespace
}  // namespace kubeslurm::sim
