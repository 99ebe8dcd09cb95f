#include "kubeslurm/sim/simulator.h"

#include <algorithm>
#include <map>

#include <gtest/gtest.h>

#include "tests/unit/sim/sim_test_util.h"

namespace kubeslurm::sim {
namespace {

using core::SchedulingPolicy;
using testing::clusterOf;
using testing::JobSpec;
using testing::swfTrace;

constexpr SchedulingPolicy kPolicies[] = {SchedulingPolicy::kFifo, SchedulingPolicy::kPriority,
                                          SchedulingPolicy::kBackfill};

SimulationResult replay(const std::vector<JobSpec>& specs, const WorkloadOptions& options,
                        const SimulationOptions& simOptions = {}) {
  auto workload = buildWorkload(swfTrace(specs), options);
  EXPECT_TRUE(workload.isOk()) << workload.status().toString();
  auto result = simulate(*workload, simOptions);
  EXPECT_TRUE(result.isOk()) << result.status().toString();
  return std::move(*result);
}

// GPUs in use on each node never exceed what it has, at any instant.
void expectCapacityRespected(const SimulationResult& result, std::uint32_t gpusPerNode) {
  std::map<std::pair<core::NodeIndex, std::int64_t>, std::int64_t> delta;
  for (const JobOutcome& job : result.jobs) {
    if (job.start < 0 || job.end < 0 || job.end == job.start) continue;
    const auto perNode = static_cast<std::int64_t>(job.gpus / job.nodeList.size());
    for (core::NodeIndex node : job.nodeList) {
      delta[{node, job.start}] += perNode;
      delta[{node, job.end}] -= perNode;
    }
  }
  std::map<core::NodeIndex, std::int64_t> inUse;
  for (const auto& [key, change] : delta) {  // by node, then time: ends net out at one instant
    inUse[key.first] += change;
    ASSERT_LE(inUse[key.first], static_cast<std::int64_t>(gpusPerNode))
        << "node " << key.first << " over capacity at t=" << key.second;
  }
}

TEST(SimulatorTest, EmptyWorkloadReplaysToNothing) {
  auto workload = buildWorkload(swfTrace({}), clusterOf(2, 1, SchedulingPolicy::kFifo));
  ASSERT_TRUE(workload.isOk());
  auto result = simulate(*workload, {});
  ASSERT_TRUE(result.isOk());
  EXPECT_EQ(result->metrics.jobs, 0U);
  EXPECT_EQ(result->planCalls, 0U);
}

TEST(SimulatorTest, AJobOnAnIdleClusterStartsAtSubmitAndRunsItsRunTime) {
  for (SchedulingPolicy policy : kPolicies) {
    const SimulationResult result =
        replay({{.submit = 5, .procs = 2, .run = 100}}, clusterOf(2, 1, policy));
    ASSERT_EQ(result.jobs.size(), 1U);
    EXPECT_EQ(result.jobs[0].start, 5);
    EXPECT_EQ(result.jobs[0].end, 105);
    EXPECT_EQ(result.jobs[0].nodeList.size(), 2U);
    EXPECT_EQ(result.jobs[0].state, JobEnd::kCompleted);
    EXPECT_DOUBLE_EQ(result.jobs[0].gpuSeconds, 200);
    EXPECT_EQ(result.metrics.makespan, 100);
    EXPECT_DOUBLE_EQ(result.metrics.gpuUtilization, 1.0);
    EXPECT_EQ(result.rejectedStarts, 0U);
  }
}

TEST(SimulatorTest, AJobThatOutrunsItsLimitIsKilledAtTheLimit) {
  const SimulationResult result =
      replay({{.run = 100, .limit = 40}}, clusterOf(1, 1, SchedulingPolicy::kBackfill));
  EXPECT_EQ(result.jobs[0].end, 40);
  EXPECT_EQ(result.jobs[0].state, JobEnd::kTimeout);
  EXPECT_EQ(result.metrics.timedOut, 1U);
}

TEST(SimulatorTest, ZeroSecondJobsStartAndFinish) {
  const SimulationResult result = replay({{.submit = 3, .run = 0}, {.submit = 3, .run = 0}},
                                         clusterOf(1, 1, SchedulingPolicy::kFifo));
  for (const JobOutcome& job : result.jobs) {
    EXPECT_EQ(job.start, 3);
    EXPECT_EQ(job.end, 3);
  }
}

TEST(SimulatorTest, InvariantsHoldOnARandomWorkloadUnderEveryPolicy) {
  const std::vector<JobSpec> jobs = testing::randomJobs(300, 24, 7);
  for (SchedulingPolicy policy : kPolicies) {
    SCOPED_TRACE(static_cast<int>(policy));
    const SimulationResult result = replay(jobs, clusterOf(8, 4, policy));
    EXPECT_EQ(result.rejectedStarts, 0U)
        << (result.diagnostics.empty() ? "" : result.diagnostics[0]);
    EXPECT_EQ(result.metrics.neverStarted, 0U);
    EXPECT_EQ(result.metrics.started, jobs.size());
    for (const JobOutcome& job : result.jobs) {
      ASSERT_GE(job.start, job.submit) << "job " << job.id << " started before its submission";
      ASSERT_GE(job.end, job.start);
    }
    expectCapacityRespected(result, 4);
    EXPECT_GT(result.metrics.gpuUtilization, 0.0);
    EXPECT_LE(result.metrics.gpuUtilization, 1.0);
    EXPECT_LE(result.metrics.nodeUtilization, 1.0);
  }
}

TEST(SimulatorTest, FifoStartsJobsInSubmissionOrder) {
  const std::vector<JobSpec> jobs = testing::randomJobs(300, 24, 11);
  const SimulationResult result = replay(jobs, clusterOf(8, 4, SchedulingPolicy::kFifo));
  // result.jobs follow the workload, which is in submission order (ties by trace order).
  for (std::size_t i = 1; i < result.jobs.size(); ++i) {
    ASSERT_GE(result.jobs[i].start, result.jobs[i - 1].start)
        << "job " << result.jobs[i].id << " overtook job " << result.jobs[i - 1].id;
  }
  EXPECT_EQ(result.metrics.backfilled, 0U);
}

// Two nodes. A holds one node for 100 s; B needs both and must wait for A; C needs one node for
// 10 s and fits in the hole before B's reservation. FIFO holds C behind B; backfill runs it at once
// without delaying B.
TEST(SimulatorTest, BackfillRunsAShortJobInTheHoleWithoutDelayingTheHead) {
  const std::vector<JobSpec> jobs = {{.submit = 0, .procs = 1, .run = 100},
                                     {.submit = 1, .procs = 2, .run = 100},
                                     {.submit = 2, .procs = 1, .run = 10}};
  const SimulationResult fifo = replay(jobs, clusterOf(2, 1, SchedulingPolicy::kFifo));
  const SimulationResult backfill = replay(jobs, clusterOf(2, 1, SchedulingPolicy::kBackfill));
  EXPECT_EQ(fifo.jobs[1].start, 100);
  EXPECT_EQ(fifo.jobs[2].start, 200);
  EXPECT_EQ(backfill.jobs[1].start, 100);  // the head's reservation holds
  EXPECT_EQ(backfill.jobs[2].start, 2);
  EXPECT_TRUE(backfill.jobs[2].backfilled);
  EXPECT_LT(backfill.metrics.wait.mean, fifo.metrics.wait.mean);
  EXPECT_LT(backfill.metrics.makespan, fifo.metrics.makespan);
}

TEST(SimulatorTest, BackfillIsNoWorseThanFifoOnMeanWaitForARandomWorkload) {
  const std::vector<JobSpec> jobs = testing::randomJobs(400, 16, 3);
  const SimulationResult fifo = replay(jobs, clusterOf(4, 4, SchedulingPolicy::kFifo));
  const SimulationResult backfill = replay(jobs, clusterOf(4, 4, SchedulingPolicy::kBackfill));
  EXPECT_LE(backfill.metrics.wait.mean, fifo.metrics.wait.mean);
}

TEST(SimulatorTest, ReportsProgressUntilEveryJobHasFinished) {
  std::vector<Progress> seen;
  SimulationOptions options;
  options.progress = [&seen](const Progress& p) { seen.push_back(p); };
  const SimulationResult result =
      replay(testing::randomJobs(50, 4, 5), clusterOf(4, 1, SchedulingPolicy::kBackfill), options);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back().finished, 50U);
  EXPECT_EQ(seen.back().total, 50U);
  EXPECT_EQ(seen.back().pending, 0U);
  EXPECT_EQ(seen.back().running, 0U);
  EXPECT_EQ(seen.back().planCalls, result.planCalls);
  for (std::size_t i = 1; i < seen.size(); ++i) EXPECT_GE(seen[i].elapsed, seen[i - 1].elapsed);
}

TEST(SimulatorTest, ChargesUsageToAccountsByTheRule) {
  WorkloadOptions options = clusterOf(2, 1, SchedulingPolicy::kPriority);
  options.accounts = *parseAccountRule("user");
  const SimulationResult result = replay(
      {{.procs = 1, .run = 100, .user = "1"}, {.procs = 1, .run = 100, .user = "2"}}, options);
  ASSERT_EQ(result.metrics.accounts.size(), 2U);
  EXPECT_EQ(result.metrics.accounts[0].account, "user-1");
  EXPECT_DOUBLE_EQ(result.metrics.accounts[0].share, 0.5);
  EXPECT_DOUBLE_EQ(result.metrics.accounts[0].usage, 0.5);
  EXPECT_DOUBLE_EQ(result.metrics.jainFairness, 1.0);
}

TEST(SimulatorTest, PeriodicPassesChangeNothingForAnEventDrivenWorkload) {
  const std::vector<JobSpec> jobs = testing::randomJobs(100, 8, 9);
  SimulationOptions periodic;
  periodic.scheduleInterval = 60;
  const SimulationResult a = replay(jobs, clusterOf(4, 2, SchedulingPolicy::kFifo));
  const SimulationResult b = replay(jobs, clusterOf(4, 2, SchedulingPolicy::kFifo), periodic);
  EXPECT_GE(b.planCalls, a.planCalls);
  for (std::size_t i = 0; i < a.jobs.size(); ++i) EXPECT_EQ(a.jobs[i].start, b.jobs[i].start);
}

TEST(SimulatorTest, RejectsWorkloadsOutOfSubmitOrder) {
  auto workload = buildWorkload(swfTrace({{.submit = 0}, {.submit = 10}}),
                                clusterOf(1, 1, SchedulingPolicy::kFifo));
  ASSERT_TRUE(workload.isOk());
  std::swap(workload->jobs[0], workload->jobs[1]);
  EXPECT_FALSE(simulate(*workload, {}).isOk());
}

}  // namespace
}  // namespace kubeslurm::sim
