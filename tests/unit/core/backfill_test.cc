// Conservative backfill: reservations, squeue --start estimates, and what may start around them
// (doc/html/sched_config.shtml; reference/slurm-22.05.md "squeue --start" and Goal C).
#include <gtest/gtest.h>

#include "tests/unit/core/builders.h"

namespace kubeslurm::core {
namespace {

using slurm::PendingReason;
using testing::idx;
using testing::kHour;
using testing::kT0;
using testing::MakeCluster;
using testing::MakeJob;
using testing::range;
using testing::referenceCluster;

// Two 4-node jobs running, a third pending: "squeue --start ... 4 train x root PD
// 2026-11-21T05:25:08 4 gpu-node-[001-004] (Resources)" -- the end time of the job on
// 001-004 (start + 1:00:00 time limit), to the second, and its nodes.
TEST(SqueueStart, EstimateIsTheEndOfTheRunningJobsToTheSecond) {
  MakeCluster c = referenceCluster();
  c.job(MakeJob().id(2).nodes(4).gpus(8).time(kHour).running(kT0 - 9, range(1, 4)));
  c.job(MakeJob().id(3).nodes(4).gpus(8).time(kHour).running(kT0 - 1, range(5, 8)));
  c.job(MakeJob().id(4).nodes(4).gpus(8).time(kHour));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  const PendingDecision* d = testing::findPending(plan, 4);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->reason, PendingReason::kResources);
  ASSERT_TRUE(d->estimatedStart.has_value());
  EXPECT_EQ(*d->estimatedStart, kT0 - 9 + kHour);
  EXPECT_EQ(d->estimatedNodes, range(1, 4));
  EXPECT_EQ(plan.stats.reservations, 1u);
}

// A blocked 4-node job reserves leaf1 from T+1h. A 1-node job of 30 min fits in the gap on 004
// and is backfilled; a 1-node job of 2 h would still hold 004 at T+1h and must wait.
TEST(Backfill, StartsOnlyJobsThatDelayNoReservation) {
  MakeCluster c = referenceCluster();
  c.job(MakeJob().nodes(3).gpus(8).exclusive().time(kHour).running(kT0, range(1, 3)));
  c.job(MakeJob().nodes(4).gpus(8).exclusive().time(3 * kHour).running(kT0, range(5, 8)));
  c.job(MakeJob().id(10).nodes(4).gpus(8).time(kHour).adminPriority(300));
  c.job(MakeJob().id(11).nodes(1).gpus(8).time(kHour / 2).adminPriority(200));
  c.job(MakeJob().id(12).nodes(1).gpus(8).time(2 * kHour).adminPriority(100));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  const PendingDecision* top = testing::findPending(plan, 10);
  ASSERT_NE(top, nullptr);
  EXPECT_EQ(top->reason, PendingReason::kResources);
  EXPECT_EQ(top->estimatedStart, kT0 + kHour);
  EXPECT_EQ(top->estimatedNodes, range(1, 4));
  const Start* small = testing::findStart(plan, 11);
  ASSERT_NE(small, nullptr);
  EXPECT_TRUE(small->backfilled);
  EXPECT_EQ(small->nodes, std::vector<NodeIndex>{idx(4)});
  const PendingDecision* longJob = testing::findPending(plan, 12);
  ASSERT_NE(longJob, nullptr);
  EXPECT_EQ(longJob->reason, PendingReason::kPriority);
  ASSERT_TRUE(longJob->estimatedStart.has_value());
  EXPECT_GE(*longJob->estimatedStart, kT0 + 2 * kHour);
  EXPECT_EQ(plan.stats.jobsBackfilled, 1u);
}

// A long job may start now on nodes no reservation wants.
TEST(Backfill, LongJobsMayUseNodesOutsideEveryReservation) {
  MakeCluster c = referenceCluster();
  c.job(MakeJob().nodes(4).gpus(8).exclusive().time(kHour).running(kT0, range(1, 4)));
  c.job(MakeJob().nodes(2).gpus(8).exclusive().time(kHour).running(kT0, range(5, 6)));
  c.job(MakeJob().id(10).nodes(4).gpus(8).time(kHour).adminPriority(300));
  c.job(MakeJob().id(11).nodes(2).gpus(8).time(10 * kHour).adminPriority(100));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_EQ(testing::pendingOf(plan, 10).estimatedNodes, range(1, 4));
  const Start* s = testing::findStart(plan, 11);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->nodes, range(7, 8));
}

// Goal C, --switches=1@00:05:00 with 001, 002, 005 busy: it pends (Resources) with squeue
// --start at the end of leaf1's jobs on gpu-node-[001-004]; after exactly 5 minutes it starts
// spanning, on gpu-node-[003,006-008].
TEST(Backfill, SwitchesWaitsForOneLeafThenSpans) {
  auto cluster = [](Time now) {
    MakeCluster c = referenceCluster();
    const Time leaf1End = kT0 + Duration{29} * 60 + 4;  // 04:58:33 for a 04:29:29 submit
    c.job(MakeJob()
              .nodes(1)
              .gpus(8)
              .exclusive()
              .time(leaf1End - (kT0 - 100))
              .running(kT0 - 100, {idx(1)}));
    c.job(MakeJob()
              .nodes(1)
              .gpus(8)
              .exclusive()
              .time(leaf1End - 200 - (kT0 - 100))
              .running(kT0 - 100, {idx(2)}));
    c.job(MakeJob().nodes(1).gpus(8).exclusive().time(5 * kHour).running(kT0 - 100, {idx(5)}));
    c.job(MakeJob().id(40).nodes(4).gpus(8).switches(1, 300).submit(kT0));
    return core::plan(c.obj(), now, Budget{});
  };
  const Plan waiting = cluster(kT0);
  const PendingDecision* d = testing::findPending(waiting, 40);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->reason, PendingReason::kResources);
  EXPECT_EQ(d->estimatedStart, kT0 + Duration{29} * 60 + 4);
  EXPECT_EQ(d->estimatedNodes, range(1, 4));
  const Plan after = cluster(kT0 + 300);
  const Start* s = testing::findStart(after, 40);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->nodes, (std::vector<NodeIndex>{idx(3), idx(6), idx(7), idx(8)}));
}

TEST(Backfill, TestsAtMostMaxJobsTested) {
  MakeCluster c = referenceCluster();
  c.job(MakeJob().nodes(8).gpus(8).exclusive().time(kHour).running(kT0, range(1, 8)));
  for (JobId id = 10; id < 20; ++id) c.job(MakeJob().id(id).nodes(1).gpus(8));
  Budget budget;
  budget.maxJobsTested = 3;
  const Plan plan = core::plan(c.obj(), kT0, budget);
  EXPECT_EQ(plan.stats.backfillDepth, 3u);
  EXPECT_TRUE(plan.stats.budgetExhausted);
  std::size_t estimated = 0;
  for (const PendingDecision& d : plan.pending) estimated += d.estimatedStart ? 1u : 0u;
  EXPECT_EQ(estimated, 3u);
}

TEST(Backfill, ReservationsStopAtMaxReservationsButStartsGoOn) {
  MakeCluster c = referenceCluster();
  c.job(MakeJob().nodes(7).gpus(8).exclusive().time(kHour).running(kT0, range(1, 7)));
  c.job(MakeJob().id(10).nodes(8).gpus(8).adminPriority(300));
  c.job(MakeJob().id(11).nodes(8).gpus(8).adminPriority(200));
  c.job(MakeJob().id(12).nodes(1).gpus(8).time(kHour / 2).adminPriority(100));
  Budget budget;
  budget.maxReservations = 1;
  const Plan plan = core::plan(c.obj(), kT0, budget);
  EXPECT_TRUE(testing::pendingOf(plan, 10).estimatedStart.has_value());
  EXPECT_FALSE(testing::pendingOf(plan, 11).estimatedStart.has_value());
  EXPECT_NE(testing::findStart(plan, 12), nullptr);
}

TEST(Backfill, NoEstimateBeyondTheWindow) {
  MakeCluster c = referenceCluster();
  c.job(MakeJob().nodes(8).gpus(8).exclusive().time(3 * testing::kDay).running(kT0, range(1, 8)));
  c.job(MakeJob().id(10).nodes(1).gpus(8));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});  // bf_window 1 day
  EXPECT_FALSE(testing::pendingOf(plan, 10).estimatedStart.has_value());
}

TEST(Backfill, PartialJobsShareNodesOverTime) {
  MakeCluster c(1);
  c.partition("train");
  c.job(MakeJob().gpus(4).time(kHour).running(kT0, {idx(1)}));
  c.job(MakeJob().id(10).gpus(8).adminPriority(300));              // waits for the 4 GPUs
  c.job(MakeJob().id(11).gpus(4).time(kHour).adminPriority(200));  // fits beside, ends in time
  c.job(MakeJob().id(12).gpus(2).time(2 * kHour).adminPriority(100));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_EQ(testing::pendingOf(plan, 10).estimatedStart, kT0 + kHour);
  EXPECT_NE(testing::findStart(plan, 11), nullptr);
  EXPECT_EQ(testing::findStart(plan, 12), nullptr);
}

TEST(Backfill, PriorityPolicyDoesNotBackfill) {
  MakeCluster c = referenceCluster();
  c.ref().config.policy = SchedulingPolicy::kPriority;
  c.job(MakeJob().nodes(4).gpus(8).exclusive().time(kHour).running(kT0, range(1, 4)));
  c.job(MakeJob().id(10).nodes(8).gpus(8).adminPriority(300));
  c.job(MakeJob().id(11).nodes(1).gpus(8).time(60).adminPriority(100));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_TRUE(plan.starts.empty());
  EXPECT_FALSE(testing::pendingOf(plan, 10).estimatedStart.has_value());
}

}  // namespace
}  // namespace kubeslurm::core
