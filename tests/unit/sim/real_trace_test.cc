// The bundled real traces (../shared/traces beside the checkout, or $KUBESLURM_TRACES): parsed
// whole, and the first 2,000 Lublin-256 jobs replayed through the real core. Skipped where the
// traces are not present.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <gtest/gtest.h>

#include "kubeslurm/sim/alibaba.h"
#include "kubeslurm/sim/simulator.h"
#include "kubeslurm/sim/swf.h"

namespace kubeslurm::sim {
namespace {

std::filesystem::path tracesDir() {
  if (const char* env = std::getenv("KUBESLURM_TRACES")) return env;
  // the checkout's root -> ../shared/traces
  return std::filesystem::path(KUBESLURM_SOURCE_DIR) / ".." / "shared" / "traces";
}

std::optional<std::string> readTrace(const std::string& name) {
  std::ifstream in(tracesDir() / name, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

#define READ_OR_SKIP(var, name)                           \
  const std::optional<std::string> var = readTrace(name); \
  if (!(var)) GTEST_SKIP() << name << " not found under " << tracesDir()

TEST(RealTraceTest, LublinParsesAllTenThousandJobs) {
  READ_OR_SKIP(text, "lublin_256.swf");
  auto trace = parseSwf(*text);
  ASSERT_TRUE(trace.isOk()) << trace.status().toString();
  EXPECT_EQ(trace->jobs.size(), 10000U);
  EXPECT_EQ(trace->maxNodes, 256U);
  EXPECT_EQ(trace->skipped, 0U);
}

TEST(RealTraceTest, AlibabaDefaultPodListAndNodeListParse) {
  READ_OR_SKIP(pods, "alibaba-gpu-v2023-openb_pod_list_default.csv");
  READ_OR_SKIP(nodes, "alibaba-gpu-v2023-openb_node_list_gpu_node.csv");
  auto trace = parseAlibabaPods(*pods);
  ASSERT_TRUE(trace.isOk()) << trace.status().toString();
  // 8,152 pods, of which 897 were deleted while still pending (no scheduled_time).
  EXPECT_EQ(trace->jobs.size() + trace->skipped, 8152U);
  EXPECT_EQ(trace->skipped, 897U);
  auto nodeList = parseAlibabaNodes(*nodes);
  ASSERT_TRUE(nodeList.isOk()) << nodeList.status().toString();
  EXPECT_EQ(nodeList->size(), 1213U);
}

TEST(RealTraceTest, AlibabaMultigpu50ListIsRefusedAsUntimed) {
  READ_OR_SKIP(pods, "alibaba-gpu-v2023-openb_pod_list_multigpu50.csv");
  EXPECT_FALSE(parseAlibabaPods(*pods).isOk());
}

TEST(RealTraceTest, FirstTwoThousandLublinJobsReplayWithBackfill) {
  READ_OR_SKIP(text, "lublin_256.swf");
  auto trace = parseSwf(*text, {.maxRecords = 2000});
  ASSERT_TRUE(trace.isOk());
  auto workload = buildWorkload(*trace, {});
  ASSERT_TRUE(workload.isOk()) << workload.status().toString();
  auto result = simulate(*workload, {});
  ASSERT_TRUE(result.isOk()) << result.status().toString();
  EXPECT_EQ(result->rejectedStarts, 0U)
      << (result->diagnostics.empty() ? "" : result->diagnostics.front());
  EXPECT_EQ(result->metrics.started, 2000U);
  for (const JobOutcome& job : result->jobs) ASSERT_GE(job.start, job.submit);
  EXPECT_GT(result->metrics.gpuUtilization, 0.3);
  EXPECT_LE(result->metrics.gpuUtilization, 1.0);
}

}  // namespace
}  // namespace kubeslurm::sim
