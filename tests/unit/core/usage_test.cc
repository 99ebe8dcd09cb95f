// Fair-share usage decay and accrual (priority_multifactor.c decay; PriorityDecayHalfLife).
#include "kubeslurm/core/usage.h"

#include <cmath>
#include <numbers>

#include <gtest/gtest.h>

#include "tests/unit/core/builders.h"

namespace kubeslurm::core {
namespace {

using testing::idx;
using testing::kDay;
using testing::kHour;
using testing::kT0;
using testing::MakeCluster;
using testing::MakeJob;

TEST(Usage, HalvesAfterOneHalfLifeExactly) {
  MakeCluster c(1);
  c.account("root", "", 1).account("a", "root", 1, 1000.0);
  c.ref().config.priority.decayHalfLife = 7 * kDay;
  const std::vector<Account> after = advanceUsage(c.obj(), kT0 + 7 * kDay);
  EXPECT_DOUBLE_EQ(after[1].rawUsage, 500.0);
  const std::vector<Account> quarter = advanceUsage(c.obj(), kT0 + 14 * kDay);
  EXPECT_DOUBLE_EQ(quarter[1].rawUsage, 250.0);
}

TEST(Usage, DecayComposesOverSteps) {
  MakeCluster c(1);
  c.account("root", "", 1).account("a", "root", 1, 1000.0);
  Snapshot s = c.obj();
  for (int i = 0; i < 7; ++i) {
    s.accounts = advanceUsage(s, s.usageTime + kDay);
    s.usageTime += kDay;
  }
  EXPECT_NEAR(s.accounts[1].rawUsage, 500.0, 1e-9);
}

// b GPU-seconds per second for dt, each second decayed by its age: b (1 - e^(-l dt)) / l.
TEST(Usage, RunningJobsAccrueDecayedBillingSeconds) {
  MakeCluster c(2);
  c.partition("train");
  c.account("root", "", 1).account("a", "root", 1).account("a", "", 1, 0, "alice");
  c.job(MakeJob().account("a").user("alice").gpus(8).running(kT0 - 100, {idx(1), idx(2)}));
  Snapshot s = c.obj();
  s.config.priority.decayHalfLife = 0;  // no decay: 16 GPUs for an hour
  EXPECT_DOUBLE_EQ(advanceUsage(s, kT0 + kHour)[2].rawUsage, 16.0 * kHour);
  s.config.priority.decayHalfLife = 7 * kDay;
  const double lambda = std::numbers::ln2 / (7.0 * kDay);
  const double want = 16.0 * (1 - std::exp(-lambda * kHour)) / lambda;
  const std::vector<Account> after = advanceUsage(s, kT0 + kHour);
  EXPECT_NEAR(after[2].rawUsage, want, 1e-6);
  EXPECT_EQ(after[1].rawUsage, 0.0);  // charged to the user association, not the account
}

TEST(Usage, OnlyTheTimeSinceUsageTimeCounts) {
  MakeCluster c(1);
  c.partition("train");
  c.account("root", "", 1).account("a", "root", 1);
  c.job(MakeJob().account("a").gpus(2).running(kT0 - 10 * kHour, {idx(1)}));
  Snapshot s = c.obj();
  s.config.priority.decayHalfLife = 0;
  EXPECT_DOUBLE_EQ(advanceUsage(s, kT0 + 60)[1].rawUsage, 120.0);
}

TEST(Usage, ExclusiveJobsPayForTheWholeNodeAndCpuWeightsCount) {
  MakeCluster c(1);
  c.partition("train");
  c.account("root", "", 1).account("a", "root", 1);
  c.job(MakeJob().account("a").gpus(1).exclusive().running(kT0, {idx(1)}));
  Snapshot s = c.obj();
  s.config.priority.decayHalfLife = 0;
  s.config.priority.billingWeightGpu = 2.0;
  s.config.priority.billingWeightCpu = 0.5;
  // 8 GPUs * 2 + 64 CPUs * 0.5 = 48 per second.
  EXPECT_DOUBLE_EQ(advanceUsage(s, kT0 + 10)[1].rawUsage, 480.0);
}

// A job whose ranks ended before `now` (while no operator ran, or between two cycles) is
// charged from usageTime to its end, and that use decays from its end on; an end before
// usageTime was charged already.
TEST(Usage, EndedJobsAreChargedUpToTheirEndOnce) {
  MakeCluster c(2);
  c.partition("train");
  c.account("root", "", 1).account("a", "root", 1);
  Snapshot s = c.obj();
  Job ran = MakeJob().account("a").gpus(8).running(kT0 - kHour, {idx(1), idx(2)}).obj();
  s.ended.push_back({ran, kT0 + 10 * 60});  // 16 GPUs, ended 10 minutes after usageTime
  s.config.priority.decayHalfLife = 0;
  EXPECT_DOUBLE_EQ(advanceUsage(s, kT0 + kHour)[1].rawUsage, 16.0 * 600);

  s.config.priority.decayHalfLife = 7 * kDay;
  const double lambda = std::numbers::ln2 / (7.0 * kDay);
  const double want =
      16.0 * (1 - std::exp(-lambda * 600)) / lambda * std::exp(-lambda * (kHour - 600));
  EXPECT_NEAR(advanceUsage(s, kT0 + kHour)[1].rawUsage, want, 1e-6);

  s.ended[0].endTime = kT0 - 60;  // before usageTime: charged while it ran
  EXPECT_EQ(advanceUsage(s, kT0 + kHour)[1].rawUsage, 0.0);
}

// Chargeback's GPU-seconds: by account and user, undecayed and unweighted whatever the
// priority settings, from `since` (or the job's start, if later) to now or the job's end; an
// exclusive job pays for its nodes' GPUs, a job without GPUs is not listed.
TEST(GpuSecondsHeld, RunningAndEndedJobsByAccountAndUserSinceTheLastCount) {
  MakeCluster c(4);
  c.partition("train");
  c.account("root", "", 1).account("a", "root", 1).account("b", "root", 1);
  c.job(MakeJob().account("a").user("alice").gpus(8).running(kT0 - kHour, {idx(1), idx(2)}));
  c.job(MakeJob().account("a").user("alice").gpus(2).running(kT0 + 30, {idx(3)}));
  c.job(MakeJob().account("b").user("bob").gpus(1).exclusive().running(kT0 - kHour, {idx(4)}));
  c.job(MakeJob().account("b").user("carol").gpus(0).running(kT0 - kHour, {idx(4)}));
  Snapshot s = c.obj();
  s.config.priority.decayHalfLife = 7 * kDay;
  s.config.priority.billingWeightGpu = 3.0;
  Job ended = MakeJob().account("b").user("bob").gpus(4).running(kT0 - kHour, {idx(3)}).obj();
  s.ended.push_back({ended, kT0 + 20});

  const auto held = gpuSecondsHeld(s, kT0, kT0 + 60);
  ASSERT_EQ(held.size(), 2U);
  EXPECT_DOUBLE_EQ((held.at({"a", "alice"})), 16.0 * 60 + 2.0 * 30);
  EXPECT_DOUBLE_EQ((held.at({"b", "bob"})), 8.0 * 60 + 4.0 * 20);
  // Counted once: a later count starts where this one ended, and the ended job is past.
  const auto next = gpuSecondsHeld(s, kT0 + 60, kT0 + 70);
  EXPECT_DOUBLE_EQ((next.at({"a", "alice"})), 18.0 * 10);
  EXPECT_DOUBLE_EQ((next.at({"b", "bob"})), 8.0 * 10);
}

}  // namespace
}  // namespace kubeslurm::core
