// Preemption by partition PriorityTier (preempt/partition_prio; doc/html/preempt.shtml).
#include <algorithm>

#include <gtest/gtest.h>

#include "tests/unit/core/builders.h"

namespace kubeslurm::core {
namespace {

using testing::idx;
using testing::kHour;
using testing::kT0;
using testing::MakeCluster;
using testing::MakeJob;
using testing::range;

// "urgent" (tier 2) above "batch" (tier 1, PreemptMode as given), both over the same 8 nodes.
MakeCluster tiers(PreemptMode batchMode) {
  MakeCluster c(8);
  c.partition("batch", 1, 7 * testing::kDay, 1, batchMode);
  c.partition("urgent", 1, 7 * testing::kDay, 2, PreemptMode::kOff);
  c.leaf("leaf1", 1, 4).leaf("leaf2", 5, 8).spine("spine", {"leaf1", "leaf2"});
  return c;
}

std::vector<JobId> victims(const Plan& plan) {
  std::vector<JobId> v;
  for (const Preemption& p : plan.preemptions) v.push_back(p.victim);
  std::sort(v.begin(), v.end());
  return v;
}

TEST(Preemption, HigherTierTakesTheYoungestGangsItNeeds) {
  MakeCluster c = tiers(PreemptMode::kRequeue);
  // Four 2-node gangs fill the cluster; the youngest started last.
  c.job(MakeJob("batch").id(1).gpus(8).time(kHour).running(kT0 - 400, range(1, 2)));
  c.job(MakeJob("batch").id(2).gpus(8).time(kHour).running(kT0 - 300, range(3, 4)));
  c.job(MakeJob("batch").id(3).gpus(8).time(kHour).running(kT0 - 200, range(5, 6)));
  c.job(MakeJob("batch").id(4).gpus(8).time(kHour).running(kT0 - 100, range(7, 8)));
  c.job(MakeJob("urgent").id(10).nodes(4).gpus(8));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_EQ(victims(plan), (std::vector<JobId>{3, 4}));
  for (const Preemption& p : plan.preemptions) {
    EXPECT_EQ(p.preemptor, 10u);
    EXPECT_EQ(p.mode, PreemptMode::kRequeue);
  }
  // The preemptor waits for its victims to leave; its nodes are where they were.
  const PendingDecision& d = testing::pendingOf(plan, 10);
  EXPECT_EQ(d.reason, slurm::PendingReason::kResources);
  EXPECT_EQ(d.estimatedStart, kT0);
  EXPECT_EQ(d.estimatedNodes, range(5, 8));
  EXPECT_TRUE(plan.starts.empty());
}

TEST(Preemption, SmallestSetNotJustTheYoungest) {
  MakeCluster c = tiers(PreemptMode::kRequeue);
  // The youngest job holds one GPU on node 8; the 8-GPU rank needs a whole node, which only
  // preempting the 2-node gang or the one on node 8 gives. Only as many victims as needed.
  c.job(MakeJob("batch").id(1).nodes(6).gpus(8).time(kHour).running(kT0 - 400, range(1, 6)));
  c.job(MakeJob("batch").id(2).gpus(8).time(kHour).running(kT0 - 300, {idx(7)}));
  c.job(MakeJob("batch").id(3).gpus(1).time(kHour).running(kT0 - 100, {idx(8)}));
  c.job(MakeJob("urgent").id(10).nodes(1).gpus(8));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_EQ(victims(plan), (std::vector<JobId>{3}));
}

TEST(Preemption, CancelModeAndNonRequeueableJobs) {
  MakeCluster c = tiers(PreemptMode::kRequeue);
  c.job(MakeJob("batch").id(1).nodes(8).gpus(8).noRequeue().time(kHour).running(kT0 - 10,
                                                                                range(1, 8)));
  c.job(MakeJob("urgent").id(10).nodes(1).gpus(8));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  ASSERT_EQ(plan.preemptions.size(), 1u);
  EXPECT_EQ(plan.preemptions[0].mode, PreemptMode::kCancel);
}

TEST(Preemption, PreemptModeOffProtectsAPartition) {
  MakeCluster c = tiers(PreemptMode::kOff);
  c.job(MakeJob("batch").id(1).nodes(8).gpus(8).time(kHour).running(kT0 - 10, range(1, 8)));
  c.job(MakeJob("urgent").id(10).nodes(1).gpus(8));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_TRUE(plan.preemptions.empty());
  EXPECT_EQ(testing::pendingOf(plan, 10).reason, slurm::PendingReason::kResources);
}

TEST(Preemption, SameTierNeverPreempts) {
  MakeCluster c = tiers(PreemptMode::kRequeue);
  c.job(MakeJob("batch").id(1).nodes(8).gpus(8).time(kHour).running(kT0 - 10, range(1, 8)));
  c.job(MakeJob("batch").id(10).nodes(1).gpus(8).adminPriority(1000000));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_TRUE(plan.preemptions.empty());
}

TEST(Preemption, ForeignLoadIsNeverAVictimAndNotPreemptedAround) {
  MakeCluster c = tiers(PreemptMode::kRequeue);
  for (std::size_t n = 1; n <= 8; ++n) c.foreign(n, {8, 0, 0});  // inference everywhere
  c.job(MakeJob("urgent").id(10).nodes(1).gpus(8));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_TRUE(plan.preemptions.empty());
  EXPECT_TRUE(plan.starts.empty());
}

TEST(Preemption, DisabledByConfig) {
  MakeCluster c = tiers(PreemptMode::kRequeue);
  c.ref().config.preemption = false;
  c.job(MakeJob("batch").id(1).nodes(8).gpus(8).time(kHour).running(kT0 - 10, range(1, 8)));
  c.job(MakeJob("urgent").id(10).nodes(1).gpus(8));
  EXPECT_TRUE(core::plan(c.obj(), kT0, Budget{}).preemptions.empty());
}

TEST(Preemption, NothingElseStartsOnThePreemptorsNodes) {
  MakeCluster c = tiers(PreemptMode::kRequeue);
  c.job(MakeJob("batch").id(1).nodes(2).gpus(4).time(kHour).running(kT0 - 10, range(1, 2)));
  c.job(MakeJob("batch").id(2).nodes(6).gpus(8).time(kHour).running(kT0 - 20, range(3, 8)));
  c.job(MakeJob("urgent").id(10).nodes(2).gpus(8));
  // A small batch job could fit in the 4 GPUs left on nodes 1-2: not while the preemptor waits.
  c.job(MakeJob("batch").id(11).nodes(1).gpus(4).time(10 * kHour));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_EQ(victims(plan), (std::vector<JobId>{1}));
  EXPECT_EQ(testing::findStart(plan, 11), nullptr);
}

}  // namespace
}  // namespace kubeslurm::core
