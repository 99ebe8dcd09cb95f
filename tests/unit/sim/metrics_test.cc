#include "kubeslurm/sim/metrics.h"

#include <tuple>

#include <gtest/gtest.h>

namespace kubeslurm::sim {
namespace {

TEST(MetricsTest, PercentileIsNearestRank) {
  const std::vector<double> values = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(percentile(values, 50), 5);
  EXPECT_EQ(percentile(values, 95), 10);
  EXPECT_EQ(percentile(values, 10), 1);
  EXPECT_EQ(percentile(values, 0), 1);
  EXPECT_EQ(percentile(values, 100), 10);
  EXPECT_EQ(percentile({}, 50), 0);
}

TEST(MetricsTest, BoundedSlowdownUsesATenSecondBound) {
  EXPECT_DOUBLE_EQ(boundedSlowdown(0, 100), 1.0);
  EXPECT_DOUBLE_EQ(boundedSlowdown(100, 100), 2.0);
  // A 1 s job that waited 99 s: (99 + 1) / 10, not 100.
  EXPECT_DOUBLE_EQ(boundedSlowdown(99, 1), 10.0);
  EXPECT_DOUBLE_EQ(boundedSlowdown(0, 1), 1.0);  // never below 1
}

TEST(MetricsTest, JainIndexIsOneWhenEqualAndOneOverNWhenOneTakesAll) {
  EXPECT_DOUBLE_EQ(jainIndex(std::vector<double>{2, 2, 2, 2}), 1.0);
  EXPECT_DOUBLE_EQ(jainIndex(std::vector<double>{4, 0, 0, 0}), 0.25);
  EXPECT_DOUBLE_EQ(jainIndex(std::vector<double>{}), 1.0);
  EXPECT_NEAR(jainIndex(std::vector<double>{1, 3}), 16.0 / 20.0, 1e-12);
}

TEST(MetricsTest, ComputesWaitsUtilizationAndShares) {
  std::vector<JobOutcome> jobs(3);
  jobs[0] = {.id = 1,
             .account = "a",
             .submit = 0,
             .start = 0,
             .end = 100,
             .gpus = 2,
             .gpuSeconds = 200,
             .state = JobEnd::kCompleted};
  jobs[1] = {.id = 2,
             .account = "b",
             .submit = 0,
             .start = 100,
             .end = 200,
             .gpus = 2,
             .gpuSeconds = 200,
             .backfilled = true,
             .state = JobEnd::kTimeout};
  jobs[2] = {.id = 3, .account = "b", .submit = 50, .state = JobEnd::kNeverStarted};
  MetricsInputs inputs;
  inputs.clusterGpus = 2;
  inputs.clusterNodes = 2;
  inputs.busyNodeSeconds = 300;
  for (auto [name, parent, shares] :
       {std::tuple{"root", "", 1U}, std::tuple{"a", "root", 1U}, std::tuple{"b", "root", 3U}}) {
    core::Account account;
    account.name = name;
    account.parent = parent;
    account.shares = shares;
    inputs.accounts.push_back(account);
  }
  const Metrics m = computeMetrics(jobs, inputs);
  EXPECT_EQ(m.jobs, 3U);
  EXPECT_EQ(m.started, 2U);
  EXPECT_EQ(m.completed, 1U);
  EXPECT_EQ(m.timedOut, 1U);
  EXPECT_EQ(m.neverStarted, 1U);
  EXPECT_EQ(m.backfilled, 1U);
  EXPECT_EQ(m.makespan, 200);
  EXPECT_DOUBLE_EQ(m.gpuUtilization, 400.0 / (2 * 200));
  EXPECT_DOUBLE_EQ(m.nodeUtilization, 300.0 / (2 * 200));
  EXPECT_DOUBLE_EQ(m.wait.mean, 50);
  EXPECT_DOUBLE_EQ(m.wait.max, 100);
  EXPECT_DOUBLE_EQ(m.boundedSlowdown.mean, 1.5);
  ASSERT_EQ(m.accounts.size(), 2U);
  EXPECT_EQ(m.accounts[0].account, "a");
  EXPECT_DOUBLE_EQ(m.accounts[0].share, 0.25);
  EXPECT_DOUBLE_EQ(m.accounts[0].usage, 0.5);
  EXPECT_DOUBLE_EQ(m.accounts[1].share, 0.75);
  EXPECT_EQ(m.accounts[1].jobs, 2U);
  EXPECT_DOUBLE_EQ(m.accounts[1].meanWait, 100);
  // usage/share: a 2.0, b 0.667 -> (2.667)^2 / (2 * (4 + 0.444)) = 0.8
  EXPECT_NEAR(m.jainFairness, 0.8, 1e-9);
}

}  // namespace
}  // namespace kubeslurm::sim
