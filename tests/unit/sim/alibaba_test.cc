#include "kubeslurm/sim/alibaba.h"

#include <gtest/gtest.h>

namespace kubeslurm::sim {
namespace {

// The header and first rows of traces/alibaba-gpu-v2023-openb_pod_list_default.csv, plus one
// pod the trace never scheduled (openb-pod-0061, verbatim).
constexpr std::string_view kPodsHead =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n"
    "openb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0\n"
    "openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061\n"
    "openb-pod-0002,12000,24576,1,1000,,LS,Running,1558381,12902960,1558381\n"
    "openb-pod-0061,11908,47104,1,1000,,BE,Pending,10001278,10001403,\n";

constexpr std::string_view kNodesHead =
    "sn,cpu_milli,memory_mib,gpu,model\n"
    "openb-node-0000,64000,262144,2,P100\n"
    "openb-node-0001,64000,262144,2,P100\n";

TEST(AlibabaTest, ReadsPodsOfTheDefaultList) {
  auto trace = parseAlibabaPods(kPodsHead);
  ASSERT_TRUE(trace.isOk()) << trace.status().toString();
  EXPECT_EQ(trace->format, TraceFormat::kAlibaba);
  ASSERT_EQ(trace->jobs.size(), 3U);
  const TraceJob& whole = trace->jobs[0];
  EXPECT_EQ(whole.id, 1U);
  EXPECT_EQ(whole.name, "openb-pod-0000");
  EXPECT_EQ(whole.cpuMillis, 12000U);
  EXPECT_EQ(whole.memoryBytes, 16384ULL * 1024 * 1024);
  EXPECT_EQ(whole.gpus, 1U);
  EXPECT_EQ(whole.gpuMilli, 1000U);
  EXPECT_EQ(whole.qos, "LS");
  EXPECT_EQ(whole.submit, 0);
  EXPECT_EQ(whole.runTime, 12537496);
  EXPECT_EQ(whole.traceWait, 0);
}

TEST(AlibabaTest, GivesAFractionalGpuPodOneWholeGpuAndKeepsTheFraction) {
  auto trace = parseAlibabaPods(kPodsHead);
  ASSERT_TRUE(trace.isOk());
  const TraceJob& shared = trace->jobs[1];
  EXPECT_EQ(shared.gpus, 1U);
  EXPECT_EQ(shared.gpuMilli, 460U);
  EXPECT_EQ(shared.submit, 427061);
  EXPECT_EQ(shared.runTime, 12902960 - 427061);
}

TEST(AlibabaTest, SkipsPodsTheTraceNeverScheduledAndSaysSo) {
  auto trace = parseAlibabaPods(kPodsHead);
  ASSERT_TRUE(trace.isOk());
  EXPECT_EQ(trace->skipped, 1U);
  ASSERT_EQ(trace->notes.size(), 1U);
  EXPECT_EQ(trace->notes[0], "1 pods skipped: never scheduled in the trace (no scheduled_time)");
  // Ids are row numbers, so a skipped row leaves a gap rather than renumbering.
  EXPECT_EQ(trace->jobs[2].id, 3U);
}

TEST(AlibabaTest, CpuOnlyPodsAskForNoGpu) {
  auto trace = parseAlibabaPods(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time\n"
      "p,4000,1024,0,0,10,70\n");
  ASSERT_TRUE(trace.isOk()) << trace.status().toString();
  ASSERT_EQ(trace->jobs.size(), 1U);
  EXPECT_EQ(trace->jobs[0].gpus, 0U);
  EXPECT_EQ(trace->jobs[0].gpuMilli, 0U);
  EXPECT_EQ(trace->jobs[0].runTime, 60);  // no scheduled_time column: ran from creation
}

TEST(AlibabaTest, FindsColumnsByNameInAnyOrder) {
  auto trace = parseAlibabaPods(
      "deletion_time,creation_time,gpu_milli,num_gpu,memory_mib,cpu_milli,name,extra\n"
      "100,40,1000,8,2048,96000,big,x\n");
  ASSERT_TRUE(trace.isOk()) << trace.status().toString();
  ASSERT_EQ(trace->jobs.size(), 1U);
  EXPECT_EQ(trace->jobs[0].gpus, 8U);
  EXPECT_EQ(trace->jobs[0].submit, 40);
  EXPECT_EQ(trace->jobs[0].runTime, 60);
}

TEST(AlibabaTest, RejectsTheUntimedMultigpu50ListWithAReason) {
  auto trace = parseAlibabaPods(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
      "openb-pod-0000,12000,16384,1,1000\n");
  ASSERT_FALSE(trace.isOk());
  EXPECT_NE(trace.status().message().find("no creation_time/deletion_time"), std::string::npos)
      << trace.status().message();
}

TEST(AlibabaTest, ErrorNamesTheLineAndTheColumn) {
  auto trace = parseAlibabaPods(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time\n"
      "a,1,1,1,1000,0,5\n"
      "b,1,1,two,1000,0,5\n");
  ASSERT_FALSE(trace.isOk());
  EXPECT_EQ(trace.status().message(),
            "alibaba pod list line 3: num_gpu is not a non-negative integer: \"two\"");
}

TEST(AlibabaTest, ErrorsOnAMissingColumnAWrongFieldCountAndQuotes) {
  EXPECT_EQ(parseAlibabaPods("name,cpu_milli\n").status().message(),
            "alibaba pod list line 1: missing column \"memory_mib\"");
  const std::string header =
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time\n";
  EXPECT_EQ(parseAlibabaPods(header + "a,1,1\n").status().message(),
            "alibaba pod list line 2: expected 7 fields, got 3");
  EXPECT_FALSE(parseAlibabaPods(header + "\"a\",1,1,1,1000,0,5\n").isOk());
  EXPECT_FALSE(parseAlibabaPods(header + "a,1,1,1,1500,0,5\n").isOk());  // gpu_milli > 1000
  EXPECT_FALSE(parseAlibabaPods("").isOk());
}

TEST(AlibabaTest, ReadsTheNodeList) {
  auto nodes = parseAlibabaNodes(kNodesHead);
  ASSERT_TRUE(nodes.isOk()) << nodes.status().toString();
  ASSERT_EQ(nodes->size(), 2U);
  EXPECT_EQ((*nodes)[0].name, "openb-node-0000");
  EXPECT_EQ((*nodes)[0].gpus, 2U);
  EXPECT_EQ((*nodes)[0].cpuMillis, 64000U);
  EXPECT_EQ((*nodes)[0].memoryBytes, 262144ULL * 1024 * 1024);
  EXPECT_EQ((*nodes)[0].model, "P100");
}

TEST(AlibabaTest, NodeListErrorNamesTheLine) {
  auto nodes = parseAlibabaNodes("sn,cpu_milli,memory_mib,gpu,model\nn1,64000,1,-2,T4\n");
  ASSERT_FALSE(nodes.isOk());
  EXPECT_EQ(nodes.status().message(),
            "alibaba node list line 2: gpu is not a non-negative integer: \"-2\"");
}

}  // namespace
}  // namespace kubeslurm::sim
