// Multifactor priority and fair-share, pinned to the reference cluster's sprio and sshare output
// (reference/slurm-22.05.md "sprio, sshare, sdiag"; slurm.conf at its end).
#include "kubeslurm/core/priority.h"

#include <array>
#include <cmath>

#include <gtest/gtest.h>

#include "tests/unit/core/builders.h"

namespace kubeslurm::core {
namespace {

using testing::kDay;
using testing::kT0;
using testing::MakeCluster;
using testing::MakeJob;
using testing::referenceCluster;

const PriorityFactors& factorsOf(const Plan& plan, JobId id) { return plan.priorities.at(id); }

// Phase 1: "4 train PRIORITY 353 = JOBSIZE 254 + PARTITION 100" (AGE and FAIRSHARE 0, no TRES
// column: phase 1 tracked no gres/gpu TRES and had no accounting).
//   jobsize   = (4 nodes / 8 + 4 CPUs / 512) / 2 = 0.25390625 -> 253.9 (sprio rounds: 254)
//   partition = PriorityJobFactor 1 / max 10 = 0.1 -> 100
//   priority  = trunc(253.9 + 100 + age) = 353 (Slurm truncates the sum)
TEST(Sprio, Phase1JobSizeAndPartitionFactors) {
  MakeCluster c = referenceCluster();
  c.ref().config.priority.weightTresGpu = 0;
  c.job(MakeJob().id(2).nodes(4).gpus(8).running(kT0 - 9, testing::range(1, 4)));
  c.job(MakeJob().id(3).nodes(4).gpus(8).running(kT0 - 1, testing::range(5, 8)));
  c.job(MakeJob().id(4).nodes(4).gpus(8).submit(kT0 - 1));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  const PriorityFactors& f = factorsOf(plan, 4);
  EXPECT_NEAR(f.jobSize, 253.90625, 1e-9);
  EXPECT_EQ(std::lround(f.jobSize), 254);
  EXPECT_DOUBLE_EQ(f.partition, 100.0);
  EXPECT_EQ(std::lround(f.age), 0);
  EXPECT_EQ(f.fairshare, 0.0);
  EXPECT_EQ(f.priority, 353u);
  // squeue: "4 ... PD (Resources)" behind the two running 4-node jobs.
  ASSERT_NE(testing::findPending(plan, 4), nullptr);
  EXPECT_EQ(testing::pendingOf(plan, 4).reason, slurm::PendingReason::kResources);
}

// Phase 2 association tree: root (user root, 1 share), ml-team (60) with user root,
// research (40) with user root; ml-team/root has used 26622 billing-seconds.
MakeCluster phase2Cluster() {
  MakeCluster c = referenceCluster();
  c.account("root", "", 1)
      .account("root", "", 1, 0, "root")
      .account("ml-team", "root", 60)
      .account("ml-team", "", 1, 26622, "root")
      .account("research", "root", 40)
      .account("research", "", 1, 0, "root");
  c.ref().config.priority.fairTree = true;
  return c;
}

// sprio phase 2:
//   20 train 3810 = FAIRSHARE 3333 + JOBSIZE 127 + PARTITION 100 + gres/gpu=250
//   21 train 10477 = 10000 + 127 + 100 + 250
// jobsize = (2/8 + 2/512) / 2 = 0.126953 -> 126.95; gres/gpu = 16 of the partition's 64 -> 250.
// 10000 + 126.95 + 100 + 250 = 10476.95: the job's age (60 s of 7 days: 0.099, shown as AGE 0)
// lifts the truncated sum to 10477, as it did on the reference cluster.
TEST(Sprio, Phase2FairShareJobSizePartitionAndGpuTres) {
  MakeCluster c = phase2Cluster();
  c.job(MakeJob().id(20).name("pend-ml").account("ml-team").nodes(2).gpus(8).submit(kT0 - 60));
  c.job(MakeJob().id(21).name("pend-rs").account("research").nodes(2).gpus(8).submit(kT0 - 60));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  const PriorityFactors& ml = factorsOf(plan, 20);
  const PriorityFactors& rs = factorsOf(plan, 21);
  EXPECT_EQ(std::lround(ml.fairshare), 3333);
  EXPECT_EQ(std::lround(ml.jobSize), 127);
  EXPECT_EQ(std::lround(ml.partition), 100);
  EXPECT_EQ(std::lround(ml.tresGpu), 250);
  EXPECT_EQ(std::lround(ml.age), 0);
  EXPECT_EQ(ml.priority, 3810u);
  EXPECT_EQ(std::lround(rs.fairshare), 10000);
  EXPECT_EQ(rs.priority, 10477u);
  // "Then 21 got gpu-node-[001-002], 20 got [003-004]".
  ASSERT_EQ(plan.starts.size(), 2u);
  EXPECT_EQ(plan.starts[0].jobId, 21u);
  EXPECT_EQ(plan.starts[0].nodes, testing::range(1, 2));
  EXPECT_EQ(plan.starts[1].jobId, 20u);
  EXPECT_EQ(plan.starts[1].nodes, testing::range(3, 4));
}

// squeue while the cluster is full: "21 ... (Resources)", "20 ... (Priority)".
TEST(Sprio, Phase2TopBlockedJobIsResourcesTheOneBehindPriority) {
  MakeCluster c = phase2Cluster();
  c.job(MakeJob().id(19).account("ml-team").nodes(8).gpus(8).exclusive().running(
      kT0 - 30, testing::range(1, 8)));
  c.job(MakeJob().id(20).account("ml-team").nodes(2).gpus(8).submit(kT0 - 60));
  c.job(MakeJob().id(21).account("research").nodes(2).gpus(8).submit(kT0 - 60));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_TRUE(plan.starts.empty());
  ASSERT_EQ(plan.pending.size(), 2u);
  EXPECT_EQ(plan.pending[0].jobId, 21u);
  EXPECT_EQ(plan.pending[0].reason, slurm::PendingReason::kResources);
  EXPECT_EQ(plan.pending[1].jobId, 20u);
  EXPECT_EQ(plan.pending[1].reason, slurm::PendingReason::kPriority);
}

// sshare phase 2, every row and column.
TEST(Sshare, Phase2RowsMatchTheReference) {
  MakeCluster c = phase2Cluster();
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  struct Row {
    const char* account;
    const char* user;
    std::uint32_t depth;
    double norm;
    double raw;
    double effective;
    double fairShare;  // < 0: not shown (an account row)
  };
  const std::array<Row, 6> want = {{
      {"root", "", 0, 0.000000, 26622, 1.000000, -1},
      {"root", "root", 1, 0.009901, 0, 0.000000, 1.000000},
      {"ml-team", "", 1, 0.594059, 26622, 1.000000, -1},
      {"ml-team", "root", 2, 1.000000, 26622, 1.000000, 0.333333},
      {"research", "", 1, 0.396040, 0, 0.000000, -1},
      {"research", "root", 2, 1.000000, 0, 0.000000, 1.000000},
  }};
  ASSERT_EQ(plan.fairShare.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    const FairShareRow& got = plan.fairShare[i];
    SCOPED_TRACE(i);
    EXPECT_EQ(got.account, want[i].account);
    EXPECT_EQ(got.user, want[i].user);
    EXPECT_EQ(got.depth, want[i].depth);
    EXPECT_NEAR(got.normShares, want[i].norm, 5e-7);
    EXPECT_NEAR(got.rawUsage, want[i].raw, 1e-9);
    EXPECT_NEAR(got.effectiveUsage, want[i].effective, 5e-7);
    if (want[i].fairShare >= 0) {
      EXPECT_NEAR(got.fairShare, want[i].fairShare, 5e-7);
    }
  }
}

// Classic fair-share (PriorityFlags=NO_FAIR_TREE): factor = 2^(-EffectvUsage / NormShares).
// Accounts a (1 share) and b (3 shares) under root; a used everything:
//   a: NormShares 0.25, EffectvUsage 1 -> 2^-4 = 0.0625;  b: EffectvUsage 0 -> 1.
TEST(FairShare, ClassicFormula) {
  const std::vector<Account> accounts = {
      {"root", "", 1, 0, ""}, {"a", "root", 1, 100, ""}, {"b", "root", 3, 0, ""}};
  const FairShareTree tree(accounts, false);
  EXPECT_DOUBLE_EQ(tree.factor(*tree.associationOf("a", "u")), 0.0625);
  EXPECT_DOUBLE_EQ(tree.factor(*tree.associationOf("b", "u")), 1.0);
  // Nested: a1 (1) and a2 (1) under a; a1 used 60, a2 40 of the root's 100.
  //   a1: UsageNorm 0.6, EffectvUsage = 0.6 + (1 - 0.6) * 1/2 = 0.8, NormShares 0.25 * 0.5.
  const std::vector<Account> nested = {{"root", "", 1, 0, ""},
                                       {"a", "root", 1, 0, ""},
                                       {"b", "root", 3, 0, ""},
                                       {"a1", "a", 1, 60, ""},
                                       {"a2", "a", 1, 40, ""}};
  const FairShareTree t2(nested, false);
  EXPECT_NEAR(t2.factor(*t2.associationOf("a1", "u")), std::exp2(-0.8 / 0.125), 1e-12);
}

TEST(FairShare, NoAccountsMeansNoFairShareFactor) {
  MakeCluster c = referenceCluster();
  c.job(MakeJob().id(1).nodes(1));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_EQ(factorsOf(plan, 1).fairshare, 0.0);
  EXPECT_TRUE(plan.fairShare.empty());
}

TEST(FairShare, UnknownAccountIsInvalidAccountWhenAccountingIsOn) {
  MakeCluster c = phase2Cluster();
  c.job(MakeJob().id(1).account("nope").nodes(1));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  ASSERT_NE(testing::findPending(plan, 1), nullptr);
  EXPECT_EQ(testing::pendingOf(plan, 1).reason, slurm::PendingReason::kInvalidAccount);
}

// ---------------------------------------------------------------------------------------------
// The other factors (priority_multifactor.c set_priority_factors / _get_priority_internal).

struct FactorCase {
  const char* name;
  PriorityConfig config;
  Job job;
  std::uint32_t want;
};

class Factors : public ::testing::TestWithParam<FactorCase> {};

TEST_P(Factors, Total) {
  const FactorCase& fc = GetParam();
  MakeCluster c = referenceCluster();
  c.ref().config.priority = fc.config;
  c.job(fc.job);
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_EQ(factorsOf(plan, fc.job.id).priority, fc.want) << fc.name;
}

PriorityConfig onlyAge() {
  PriorityConfig p;
  p.weightFairshare = p.weightJobSize = p.weightPartition = p.weightTresGpu = 0;
  p.weightAge = 1000;
  p.maxAge = 7 * kDay;
  return p;
}

PriorityConfig onlySize(bool favorSmall) {
  PriorityConfig p;
  p.weightFairshare = p.weightAge = p.weightPartition = p.weightTresGpu = 0;
  p.weightJobSize = 1000;
  p.favorSmall = favorSmall;
  return p;
}

PriorityConfig onlyQos() {
  PriorityConfig p;
  p.weightFairshare = p.weightAge = p.weightPartition = p.weightTresGpu = p.weightJobSize = 0;
  p.weightQos = 1000;
  p.maxQosPriority = 200;
  return p;
}

INSTANTIATE_TEST_SUITE_P(
    Multifactor, Factors,
    ::testing::Values(
        // age = waited / PriorityMaxAge: 3.5 of 7 days -> 500.
        FactorCase{"age half", onlyAge(), MakeJob().id(1).submit(kT0 - 302400), 500},
        // capped at PriorityMaxAge: 30 days -> 1000.
        FactorCase{"age capped", onlyAge(), MakeJob().id(1).submit(kT0 - 30 * kDay), 1000},
        // age accrues from the eligible time, not the submit time.
        FactorCase{"age from eligible", onlyAge(),
                   MakeJob().id(1).submit(kT0 - 30 * kDay).eligible(kT0 - 302400), 500},
        // favor small: ((8 - 4) / 8 + (512 - 4) / 512) / 2 = 0.74609 -> 746.
        FactorCase{"favor small", onlySize(true), MakeJob().id(1).nodes(4), 746},
        // nice subtracts: 746 - 100.
        FactorCase{"nice", onlySize(true), MakeJob().id(1).nodes(4).nice(100), 646},
        // the sum never goes below 1 (0 means held).
        FactorCase{"floor 1", onlySize(true), MakeJob().id(1).nodes(4).nice(5000), 1},
        // QOS Priority 50 of the largest 200 -> 250.
        FactorCase{"qos", onlyQos(), MakeJob().id(1).qos(50), 250},
        // an administrator's --priority replaces the formula.
        FactorCase{"admin", onlySize(true), MakeJob().id(1).adminPriority(42), 42}),
    [](const ::testing::TestParamInfo<FactorCase>& param) {
      return "Case" + std::to_string(param.index);
    });

TEST(Priority, HeldJobsHavePriorityZeroAndReasonJobHeldUser) {
  MakeCluster c = referenceCluster();
  c.job(MakeJob().id(1).held());
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_EQ(factorsOf(plan, 1).priority, 0u);
  EXPECT_EQ(testing::pendingOf(plan, 1).reason, slurm::PendingReason::kJobHeldUser);
}

TEST(Priority, TiesBreakBySubmitTimeThenId) {
  MakeCluster c = referenceCluster();
  c.job(MakeJob().nodes(8).gpus(8).exclusive().running(kT0 - 10, testing::range(1, 8)));
  c.job(MakeJob().id(30).submit(kT0 - 5));
  c.job(MakeJob().id(20).submit(kT0 - 5));
  c.job(MakeJob().id(10).submit(kT0 - 1));
  PriorityConfig& p = c.ref().config.priority;
  p.weightAge = 0;  // all three equal
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  ASSERT_EQ(plan.pending.size(), 3u);
  EXPECT_EQ(plan.pending[0].jobId, 20u);
  EXPECT_EQ(plan.pending[1].jobId, 30u);
  EXPECT_EQ(plan.pending[2].jobId, 10u);
}

TEST(Priority, PartitionTierOrdersBeforePriority) {
  MakeCluster c = referenceCluster();
  c.ref().partitions[1].priorityTier = 5;  // debug
  c.job(MakeJob("train").id(1).nodes(8).gpus(8).adminPriority(100000));
  c.job(MakeJob("debug").id(2).nodes(8).gpus(8).adminPriority(1));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  ASSERT_EQ(plan.starts.size(), 1u);
  EXPECT_EQ(plan.starts[0].jobId, 2u);
}

}  // namespace
}  // namespace kubeslurm::core
