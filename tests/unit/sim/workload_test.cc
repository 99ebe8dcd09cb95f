#include "kubeslurm/sim/workload.h"

#include <set>

#include <gtest/gtest.h>

#include "tests/unit/sim/sim_test_util.h"

namespace kubeslurm::sim {
namespace {

using testing::JobSpec;
using testing::swfTrace;

TEST(AccountRuleTest, ParsesEveryForm) {
  for (const char* text : {"none", "user", "group", "queue", "partition", "qos", "user%8", "job%4",
                           "job%4@42", "group%2@0"}) {
    auto rule = parseAccountRule(text);
    ASSERT_TRUE(rule.isOk()) << text << ": " << rule.status().toString();
    EXPECT_EQ(rule->text, text);
  }
  auto rule = parseAccountRule("job%4@42");
  ASSERT_TRUE(rule.isOk());
  EXPECT_EQ(rule->field, AccountField::kJob);
  EXPECT_EQ(rule->buckets, 4U);
  EXPECT_EQ(rule->seed, 42U);
}

TEST(AccountRuleTest, RejectsMalformedRules) {
  for (const char* text : {"", "users", "user%", "user%0", "user%x", "user@3", "job", "none%2",
                           "user%2@", "user%2@x", "user%2 "}) {
    EXPECT_FALSE(parseAccountRule(text).isOk()) << text;
  }
}

TEST(AccountRuleTest, NamesAccountsByFieldValue) {
  TraceJob job;
  job.id = 7;
  job.user = "12";
  job.qos = "LS";
  EXPECT_EQ(accountFor(*parseAccountRule("none"), job), "all");
  EXPECT_EQ(accountFor(*parseAccountRule("user"), job), "user-12");
  EXPECT_EQ(accountFor(*parseAccountRule("qos"), job), "qos-LS");
  EXPECT_EQ(accountFor(*parseAccountRule("group"), job), "group-unknown");
}

TEST(AccountRuleTest, BucketsAreDeterministicSeededAndSpread) {
  const AccountRule rule = *parseAccountRule("job%4@1");
  const AccountRule reseeded = *parseAccountRule("job%4@2");
  std::set<std::string> seen;
  int moved = 0;
  for (std::uint64_t id = 1; id <= 200; ++id) {
    TraceJob job;
    job.id = id;
    const std::string account = accountFor(rule, job);
    EXPECT_EQ(account, accountFor(rule, job));
    seen.insert(account);
    if (accountFor(reseeded, job) != account) ++moved;
  }
  EXPECT_EQ(seen, (std::set<std::string>{"acct-0", "acct-1", "acct-2", "acct-3"}));
  EXPECT_GT(moved, 50);  // another seed is another assignment
}

TEST(WorkloadTest, OneProcessorIsOneNodeOfOneGpuByDefault) {
  Trace trace = swfTrace({{.submit = 0, .procs = 16, .run = 100}});
  trace.maxNodes = 256;
  auto workload = buildWorkload(trace, {});
  ASSERT_TRUE(workload.isOk()) << workload.status().toString();
  ASSERT_EQ(workload->cluster.nodes.size(), 256U);
  EXPECT_EQ(workload->cluster.nodes[0].name, "node-001");
  EXPECT_EQ(workload->cluster.nodes[255].name, "node-256");
  EXPECT_EQ(workload->cluster.nodes[0].allocatable.gpus, 1U);
  ASSERT_EQ(workload->jobs.size(), 1U);
  const core::Job& job = workload->jobs[0].job;
  EXPECT_EQ(job.minNodes, 16U);
  EXPECT_EQ(job.maxNodes, 16U);
  EXPECT_EQ(job.gpusPerNode, 1U);
  EXPECT_EQ(job.timeLimit, 100);  // run time x 1.0
  EXPECT_EQ(job.submitTime, kDefaultEpoch);
  EXPECT_EQ(job.partition, "batch");
  EXPECT_EQ(job.account, "all");
  ASSERT_EQ(workload->cluster.partitions.size(), 1U);
  EXPECT_EQ(workload->cluster.partitions[0].nodes.size(), 256U);
  EXPECT_TRUE(workload->cluster.partitions[0].isDefault);
}

TEST(WorkloadTest, SpreadsProcessorsOverMultiGpuNodes) {
  Trace trace = swfTrace({{.procs = 3}, {.procs = 8}, {.procs = 13}, {.procs = 64}});
  auto workload = buildWorkload(trace, testing::clusterOf(8, 8, core::SchedulingPolicy::kFifo));
  ASSERT_TRUE(workload.isOk());
  ASSERT_EQ(workload->jobs.size(), 4U);
  const auto shape = [&](std::size_t i) {
    return std::pair(workload->jobs[i].job.minNodes, workload->jobs[i].job.gpusPerNode);
  };
  EXPECT_EQ(shape(0), std::pair(1U, 3U));
  EXPECT_EQ(shape(1), std::pair(1U, 8U));
  EXPECT_EQ(shape(2), std::pair(2U, 7U));  // 13 processors round up to 2 x 7
  EXPECT_EQ(shape(3), std::pair(8U, 8U));
}

TEST(WorkloadTest, TimeLimitIsTheRequestElseRunTimesTheFactor) {
  Trace trace = swfTrace({{.run = 100, .limit = 50}, {.run = 100}, {.run = 0}});
  WorkloadOptions options = testing::clusterOf(4, 1, core::SchedulingPolicy::kFifo);
  options.timeLimitFactor = 2.5;
  auto workload = buildWorkload(trace, options);
  ASSERT_TRUE(workload.isOk());
  EXPECT_EQ(workload->jobs[0].job.timeLimit, 50);
  EXPECT_EQ(workload->jobs[1].job.timeLimit, 250);
  EXPECT_EQ(workload->jobs[2].job.timeLimit, 1);  // a 0 s job still gets a limit
  options.timeLimitFactor = 0;
  EXPECT_FALSE(buildWorkload(trace, options).isOk());
}

TEST(WorkloadTest, DropsJobsLargerThanTheClusterAndSaysSo) {
  Trace trace = swfTrace({{.procs = 4}, {.procs = 5}});
  auto workload = buildWorkload(trace, testing::clusterOf(4, 1, core::SchedulingPolicy::kFifo));
  ASSERT_TRUE(workload.isOk());
  EXPECT_EQ(workload->jobs.size(), 1U);
  EXPECT_EQ(workload->dropped, 1U);
  ASSERT_FALSE(workload->notes.empty());
  EXPECT_EQ(workload->notes.back(), "1 jobs dropped: larger than any node set of this cluster");
}

TEST(WorkloadTest, SortsBySubmitTimeKeepingTraceOrderForTies) {
  Trace trace = swfTrace({{.submit = 50}, {.submit = 10}, {.submit = 10}});
  auto workload = buildWorkload(trace, testing::clusterOf(2, 1, core::SchedulingPolicy::kFifo));
  ASSERT_TRUE(workload.isOk());
  EXPECT_EQ(workload->jobs[0].job.id, 2U);
  EXPECT_EQ(workload->jobs[1].job.id, 3U);
  EXPECT_EQ(workload->jobs[2].job.id, 1U);
}

TEST(WorkloadTest, AccountsAreLeavesUnderRootWithEqualShares) {
  Trace trace = swfTrace({{.user = "1"}, {.user = "2"}, {.user = "1"}});
  WorkloadOptions options = testing::clusterOf(2, 1, core::SchedulingPolicy::kPriority);
  options.accounts = *parseAccountRule("user");
  auto workload = buildWorkload(trace, options);
  ASSERT_TRUE(workload.isOk());
  const auto& accounts = workload->cluster.accounts;
  ASSERT_EQ(accounts.size(), 3U);
  EXPECT_EQ(accounts[0].name, "root");
  EXPECT_EQ(accounts[0].parent, "");
  EXPECT_EQ(accounts[1].name, "user-1");
  EXPECT_EQ(accounts[1].parent, "root");
  EXPECT_EQ(accounts[2].name, "user-2");
  EXPECT_EQ(workload->jobs[1].job.account, "user-2");
  EXPECT_EQ(workload->jobs[1].job.user, "user-2");
}

TEST(WorkloadTest, RejectsDuplicateIdsAndDuplicateNodeNames) {
  Trace trace = swfTrace({{}, {}});
  trace.jobs[1].id = 1;
  EXPECT_FALSE(
      buildWorkload(trace, testing::clusterOf(2, 1, core::SchedulingPolicy::kFifo)).isOk());
  WorkloadOptions options;
  options.cluster.nodeNames = {"a", "a"};
  EXPECT_FALSE(buildWorkload(swfTrace({{}}), options).isOk());
}

TEST(WorkloadTest, AlibabaPodsRunOnTheTraceNodesWithModelsAsFeatures) {
  Trace trace;
  trace.format = TraceFormat::kAlibaba;
  trace.nodes = {{"n0", 2, 64000, 1ULL << 30, "T4"}, {"n1", 8, 96000, 1ULL << 31, "V100M32"}};
  TraceJob pod;
  pod.id = 1;
  pod.gpus = 1;
  pod.gpuMilli = 460;
  pod.cpuMillis = 6000;
  pod.memoryBytes = 1ULL << 20;
  pod.runTime = 30;
  trace.jobs.push_back(pod);
  pod.id = 2;
  pod.gpus = 8;
  pod.gpuSpec = "V100M32";
  trace.jobs.push_back(pod);
  pod.id = 3;
  pod.gpus = 16;  // no node has 16 GPUs
  pod.gpuSpec.clear();
  trace.jobs.push_back(pod);
  auto workload = buildWorkload(trace, {});
  ASSERT_TRUE(workload.isOk()) << workload.status().toString();
  ASSERT_EQ(workload->cluster.nodes.size(), 2U);
  EXPECT_EQ(workload->cluster.nodes[1].features, std::vector<std::string>{"V100M32"});
  ASSERT_EQ(workload->jobs.size(), 2U);
  EXPECT_EQ(workload->jobs[0].job.gpusPerNode, 1U);
  EXPECT_EQ(workload->jobs[0].job.cpuMillisPerNode, 6000U);
  EXPECT_EQ(workload->jobs[0].gpuMilli, 460U);
  EXPECT_EQ(workload->jobs[1].job.constraints, std::vector<std::string>{"V100M32"});
  EXPECT_EQ(workload->dropped, 1U);
}

}  // namespace
}  // namespace kubeslurm::sim
