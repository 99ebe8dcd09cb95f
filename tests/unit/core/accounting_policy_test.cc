// QOS and association limits (src/slurmctld/acct_policy.c, 22.05; doc/html/resource_limits.shtml),
// preempt/qos (doc/html/preempt.shtml), jobs of several partitions (sbatch -p a,b) and the
// bf_max_time deadline.
#include <gtest/gtest.h>

#include "tests/unit/core/builders.h"

namespace kubeslurm::core {
namespace {

using slurm::PendingReason;
using testing::kHour;
using testing::kT0;
using testing::MakeCluster;
using testing::MakeJob;
using testing::range;

MakeCluster eightNodes() {
  MakeCluster c(8);
  c.partition("train");
  return c;
}

AssociationLimits grpGpus(std::uint64_t gpus) {
  AssociationLimits l;
  l.grpTres.gpus = gpus;
  return l;
}

// GrpTRES=gres/gpu=16 with 8 in use: a 16-GPU job waits with AssocGrpGRES and gets no
// reservation (backfill.c skips it); a later 8-GPU job of the same account still starts, because
// a job the limits hold back does not block its partition (job_scheduler.c "delayed for
// accounting policy").
TEST(AccountingPolicy, GrpGresHoldsTheJobButNotThePartition) {
  MakeCluster c = eightNodes();
  c.account("root", "", 1).account("ml", "root", 1).limits(grpGpus(16));
  c.job(MakeJob().id(1).account("ml").gpus(8).running(kT0 - 60, range(1, 1)));
  c.job(MakeJob().id(2).account("ml").nodes(2).gpus(8).submit(kT0 - 50));
  c.job(MakeJob().id(3).account("ml").gpus(8).submit(kT0 - 40));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  const PendingDecision& held = testing::pendingOf(plan, 2);
  EXPECT_EQ(held.reason, PendingReason::kAssocGrpGRES);
  EXPECT_FALSE(held.estimatedStart.has_value());
  EXPECT_NE(testing::findStart(plan, 3), nullptr);
}

// Jobs this cycle starts count at once: three 8-GPU jobs under a 16-GPU cap, two start.
TEST(AccountingPolicy, StartsOfThisCycleCountAgainstTheLimit) {
  MakeCluster c = eightNodes();
  c.account("root", "", 1).account("ml", "root", 1).limits(grpGpus(16));
  for (JobId id = 1; id <= 3; ++id) {
    c.job(MakeJob().id(id).account("ml").gpus(8).submit(kT0 - 100 + static_cast<Time>(id)));
  }
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_NE(testing::findStart(plan, 1), nullptr);
  EXPECT_NE(testing::findStart(plan, 2), nullptr);
  EXPECT_EQ(testing::pendingOf(plan, 3).reason, PendingReason::kAssocGrpGRES);
}

// A Grp limit caps the association with everything below it, checked at every level up to the
// root (acct_policy_job_runnable_pre_select walks parent_assoc_ptr).
TEST(AccountingPolicy, ParentGrpJobsCapsEveryChild) {
  MakeCluster c = eightNodes();
  AssociationLimits oneJob;
  oneJob.grpJobs = 1;
  c.account("root", "", 1).account("research", "root", 1).limits(oneJob);
  c.account("ml", "research", 1).account("cv", "research", 1).account("ops", "root", 1);
  c.job(MakeJob().id(1).account("ml").gpus(1).running(kT0 - 60, range(1, 1)));
  c.job(MakeJob().id(2).account("ml").gpus(1));
  c.job(MakeJob().id(3).account("cv").gpus(1));
  c.job(MakeJob().id(4).account("ops").gpus(1));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_EQ(testing::pendingOf(plan, 2).reason, PendingReason::kAssocGrpJobsLimit);
  EXPECT_EQ(testing::pendingOf(plan, 3).reason, PendingReason::kAssocGrpJobsLimit);
  EXPECT_NE(testing::findStart(plan, 4), nullptr);
}

// MaxJobs set on an account is inherited by each user association under it and counts that
// association's jobs: alice at her limit waits with AssocMaxJobsLimit, bob does not.
TEST(AccountingPolicy, MaxJobsIsInheritedPerUserAssociation) {
  MakeCluster c = eightNodes();
  AssociationLimits one;
  one.maxJobs = 1;
  c.account("root", "", 1).account("ml", "root", 1).limits(one);
  c.account("ml", "", 1, 0, "alice").account("ml", "", 1, 0, "bob");
  c.job(MakeJob().id(1).account("ml").user("alice").gpus(1).running(kT0 - 60, range(1, 1)));
  c.job(MakeJob().id(2).account("ml").user("alice").gpus(1));
  c.job(MakeJob().id(3).account("ml").user("bob").gpus(1));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_EQ(testing::pendingOf(plan, 2).reason, PendingReason::kAssocMaxJobsLimit);
  EXPECT_NE(testing::findStart(plan, 3), nullptr);
}

// Without user associations (the operator's Accounts), MaxJobs still counts per user.
TEST(AccountingPolicy, MaxJobsCountsPerUserInAnAccountAssociation) {
  MakeCluster c = eightNodes();
  AssociationLimits one;
  one.maxJobs = 1;
  c.account("root", "", 1).account("ml", "root", 1).limits(one);
  c.job(MakeJob().id(1).account("ml").user("alice").gpus(1).running(kT0 - 60, range(1, 1)));
  c.job(MakeJob().id(2).account("ml").user("alice").gpus(1));
  c.job(MakeJob().id(3).account("ml").user("bob").gpus(1));
  c.job(MakeJob().id(4).account("ml").user("bob").gpus(1));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_EQ(testing::pendingOf(plan, 2).reason, PendingReason::kAssocMaxJobsLimit);
  EXPECT_NE(testing::findStart(plan, 3), nullptr);
  EXPECT_EQ(testing::pendingOf(plan, 4).reason, PendingReason::kAssocMaxJobsLimit);
}

// Per-job limits: MaxWall, and MaxTRESPerJob with node tested before gres/gpu (the order of
// Slurm's TRES table), a TRES the job asks none of never holding it back.
TEST(AccountingPolicy, PerJobLimits) {
  MakeCluster c = eightNodes();
  AssociationLimits l;
  l.maxWallPerJob = kHour;
  l.maxTresPerJob.nodes = 2;
  l.maxTresPerJob.gpus = 8;
  c.account("root", "", 1).account("ml", "root", 1).limits(l);
  c.job(MakeJob().id(1).account("ml").time(2 * kHour));
  c.job(MakeJob().id(2).account("ml").nodes(4).gpus(8));
  c.job(MakeJob().id(3).account("ml").nodes(2).gpus(8));
  c.job(MakeJob().id(4).account("ml").nodes(2).gpus(0));
  c.job(MakeJob().id(5).account("ml").nodes(1).gpus(8));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_EQ(testing::pendingOf(plan, 1).reason, PendingReason::kAssocMaxWallDurationPerJobLimit);
  EXPECT_EQ(testing::pendingOf(plan, 2).reason, PendingReason::kAssocMaxNodePerJobLimit);
  EXPECT_EQ(testing::pendingOf(plan, 3).reason, PendingReason::kAssocMaxGRESPerJob);
  EXPECT_NE(testing::findStart(plan, 4), nullptr);
  EXPECT_NE(testing::findStart(plan, 5), nullptr);
}

Qos makeQos(std::string name, std::uint32_t priority = 0) {
  Qos q;
  q.name = std::move(name);
  q.priority = priority;
  return q;
}

// QOS MaxTRESPerUser=gres/gpu=8: alice's second 8-GPU job waits with QOSMaxGRESPerUser; bob's
// runs.
TEST(AccountingPolicy, QosMaxGresPerUser) {
  MakeCluster c = eightNodes();
  Qos normal = makeQos("normal");
  normal.maxTresPerUser.gpus = 8;
  c.qos(normal);
  c.job(MakeJob().id(1).qosName("normal").user("alice").gpus(8).running(kT0 - 60, range(1, 1)));
  c.job(MakeJob().id(2).qosName("normal").user("alice").gpus(8));
  c.job(MakeJob().id(3).qosName("normal").user("bob").gpus(8));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_EQ(testing::pendingOf(plan, 2).reason, PendingReason::kQOSMaxGRESPerUser);
  EXPECT_NE(testing::findStart(plan, 3), nullptr);
}

// A limit the QOS sets makes the association's of the same kind moot (qos_rec.grp_jobs !=
// INFINITE skips the association's GrpJobs); one it does not set still applies.
TEST(AccountingPolicy, QosLimitOverridesTheAssociationsOfTheSameKind) {
  MakeCluster c = eightNodes();
  Qos big = makeQos("big");
  big.grpJobs = 10;
  c.qos(big).qos(makeQos("normal"));
  AssociationLimits one;
  one.grpJobs = 1;
  c.account("root", "", 1).account("ml", "root", 1).limits(one);
  c.job(MakeJob().id(1).account("ml").qosName("normal").gpus(1).running(kT0 - 60, range(1, 1)));
  c.job(MakeJob().id(2).account("ml").qosName("big").gpus(1));
  c.job(MakeJob().id(3).account("ml").qosName("normal").gpus(1));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_NE(testing::findStart(plan, 2), nullptr);
  EXPECT_EQ(testing::pendingOf(plan, 3).reason, PendingReason::kAssocGrpJobsLimit);
}

// With QOS definitions, an unknown QOS is InvalidQOS, and a QOS's Priority is the numerator of
// the QOS factor, normalised by the largest defined Priority.
TEST(AccountingPolicy, QosDefinitionsNameAndPrioritiseJobs) {
  MakeCluster c = eightNodes();
  c.qos(makeQos("normal", 10)).qos(makeQos("high", 40));
  c.ref().config.priority.weightQos = 1000;
  c.job(MakeJob().id(1).qosName("bogus").gpus(1));
  c.job(MakeJob().id(2).qosName("normal").nodes(8).gpus(8).running(kT0 - 60, range(1, 8)));
  c.job(MakeJob().id(3).qosName("normal").gpus(8));
  c.job(MakeJob().id(4).qosName("high").gpus(8).qos(1));  // the definition wins over the job's
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_EQ(testing::pendingOf(plan, 1).reason, PendingReason::kInvalidQOS);
  EXPECT_DOUBLE_EQ(plan.priorities.at(3).qos, 250.0);
  EXPECT_DOUBLE_EQ(plan.priorities.at(4).qos, 1000.0);
}

// preempt/qos: "high" lists "low" in Preempt=; the youngest low job goes, with low's PreemptMode.
// A younger job of a QOS high does not list is never a victim, and "low" jobs cannot preempt.
TEST(QosPreemption, PreemptsOnlyTheListedQos) {
  MakeCluster c(4);
  c.partition("train");
  c.ref().config.preemptType = PreemptType::kQos;
  Qos high = makeQos("high");
  high.preempt = {"low"};
  Qos low = makeQos("low");
  low.preemptMode = PreemptMode::kCancel;
  c.qos(high).qos(low).qos(makeQos("normal"));
  c.job(MakeJob().id(1).qosName("low").gpus(8).running(kT0 - 400, range(1, 1)));
  c.job(MakeJob().id(2).qosName("low").gpus(8).running(kT0 - 300, range(2, 2)));
  c.job(MakeJob().id(3).qosName("normal").gpus(8).running(kT0 - 100, range(3, 4)).obj());
  c.job(MakeJob().id(10).qosName("high").gpus(8));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  ASSERT_EQ(plan.preemptions.size(), 1u);
  EXPECT_EQ(plan.preemptions[0].victim, 2u);
  EXPECT_EQ(plan.preemptions[0].preemptor, 10u);
  EXPECT_EQ(plan.preemptions[0].mode, PreemptMode::kCancel);

  MakeCluster d(2);
  d.partition("train");
  d.ref().config.preemptType = PreemptType::kQos;
  d.qos(high).qos(low);
  d.job(MakeJob().id(1).qosName("high").nodes(2).gpus(8).running(kT0 - 100, range(1, 2)));
  d.job(MakeJob().id(2).qosName("low").gpus(8));
  EXPECT_TRUE(core::plan(d.obj(), kT0, Budget{}).preemptions.empty());
}

// A QOS without its own PreemptMode is preempted with slurm.conf's PreemptMode, and REQUEUE
// becomes CANCEL for a job that may not be requeued.
TEST(QosPreemption, ClusterPreemptModeIsTheDefault) {
  MakeCluster c(1);
  c.partition("train");
  c.ref().config.preemptType = PreemptType::kQos;
  Qos high = makeQos("high");
  high.preempt = {"low"};
  c.qos(high).qos(makeQos("low"));
  c.job(MakeJob().id(1).qosName("low").gpus(8).running(kT0 - 100, range(1, 1)));
  c.job(MakeJob().id(10).qosName("high").gpus(8));
  Plan plan = core::plan(c.obj(), kT0, Budget{});
  ASSERT_EQ(plan.preemptions.size(), 1u);
  EXPECT_EQ(plan.preemptions[0].mode, PreemptMode::kRequeue);
  c.ref().jobs[0].requeue = false;
  plan = core::plan(c.obj(), kT0, Budget{});
  ASSERT_EQ(plan.preemptions.size(), 1u);
  EXPECT_EQ(plan.preemptions[0].mode, PreemptMode::kCancel);
}

// Two partitions over disjoint halves of the cluster.
MakeCluster twoHalves(Duration aMaxTime = 7 * testing::kDay) {
  MakeCluster c(8);
  c.partition("a", 1, aMaxTime);
  c.lastPartition().nodes = range(1, 4);
  c.partition("b");
  c.lastPartition().nodes = range(5, 8);
  return c;
}

// sbatch -p a,b: the job starts in whichever partition can take it now, and the Start says which.
TEST(MultiPartition, StartsWhereItFits) {
  MakeCluster c = twoHalves();
  c.job(MakeJob("a").id(1).nodes(4).gpus(8).running(kT0 - 60, range(1, 4)));
  c.job(MakeJob("a").id(2).nodes(2).gpus(8).alsoPartitions({"b"}));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  const Start* s = testing::findStart(plan, 2);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->partition, "b");
  EXPECT_EQ(s->nodes, range(5, 6));
  EXPECT_EQ(testing::findPending(plan, 2), nullptr);
  EXPECT_EQ(plan.starts.size(), 1u);
}

// Each partition's limits apply to its own entry: over a's MaxTime, the job runs in b.
TEST(MultiPartition, EachPartitionsLimitsApplyToItsEntry) {
  MakeCluster c = twoHalves(kHour);
  c.job(MakeJob("a").id(1).gpus(8).time(2 * kHour).alsoPartitions({"b"}));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  const Start* s = testing::findStart(plan, 1);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->partition, "b");
}

// Both full: b's entry comes first (higher PriorityJobFactor) and reserves; a's then tests only an
// immediate start (backfill.c: "already added a backfill reservation. Test immediate start only").
// One decision for the job, with b's estimate.
TEST(MultiPartition, OneReservationAndOneDecision) {
  MakeCluster c = twoHalves();
  c.lastPartition().priorityJobFactor = 2;
  c.job(MakeJob("a").id(1).nodes(4).gpus(8).time(2 * kHour).running(kT0 - 60, range(1, 4)));
  c.job(MakeJob("b").id(2).nodes(4).gpus(8).time(kHour).running(kT0 - 60, range(5, 8)));
  c.job(MakeJob("a").id(3).nodes(2).gpus(8).alsoPartitions({"b"}));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_TRUE(plan.starts.empty());
  std::size_t decisions = 0;
  for (const PendingDecision& d : plan.pending) decisions += d.jobId == 3 ? 1 : 0;
  EXPECT_EQ(decisions, 1u);
  const PendingDecision& d = testing::pendingOf(plan, 3);
  EXPECT_EQ(d.reason, PendingReason::kResources);
  EXPECT_EQ(d.estimatedStart, kT0 - 60 + kHour);
  EXPECT_EQ(d.estimatedNodes, range(5, 6));
  EXPECT_EQ(plan.stats.reservations, 1u);
}

// A job of several partitions has a priority in each, the partition factor its own
// (priority_multifactor.c _filter_job: one factors object per part_ptr_list entry, with
// priority_part from that partition): sprio shows both rows, in the order the job names them.
TEST(MultiPartition, APriorityInEachPartition) {
  MakeCluster c = twoHalves();
  c.lastPartition().priorityJobFactor = 2;  // b: factor 1.0; a: 0.5
  c.job(MakeJob("a").id(1).nodes(4).gpus(8).time(2 * kHour).running(kT0 - 60, range(1, 4)));
  c.job(MakeJob("b").id(2).nodes(4).gpus(8).time(kHour).running(kT0 - 60, range(5, 8)));
  c.job(MakeJob("a").id(3).nodes(2).gpus(8).alsoPartitions({"b"}));
  c.job(MakeJob("a").id(4).nodes(2).gpus(8));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  ASSERT_EQ(plan.partitionPriorities.size(), 1u);  // job 4 names one partition
  const std::vector<PartitionPriority>& rows = plan.partitionPriorities.at(3);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].partition, "a");
  EXPECT_EQ(rows[1].partition, "b");
  EXPECT_DOUBLE_EQ(rows[0].factors.partition, 500.0);
  EXPECT_DOUBLE_EQ(rows[1].factors.partition, 1000.0);
  EXPECT_EQ(rows[1].factors.priority, rows[0].factors.priority + 500);
  // The job's one priority is its leading entry's: b's, the higher.
  EXPECT_EQ(plan.priorities.at(3).priority, rows[1].factors.priority);
}

// bf_max_time: a deadline that passes after two questions stops backfill after two jobs.
class CountingDeadline : public Deadline {
 public:
  explicit CountingDeadline(int allowed) : left_(allowed) {}
  bool passed() const override { return left_-- <= 0; }

 private:
  mutable int left_;
};

TEST(BackfillDeadline, StopsThePassWhenItPasses) {
  MakeCluster c = eightNodes();
  c.job(MakeJob().id(1).nodes(8).gpus(8).time(kHour).running(kT0 - 60, range(1, 8)));
  for (JobId id = 2; id <= 6; ++id) {
    c.job(MakeJob().id(id).gpus(8).submit(kT0 - 100 + static_cast<Time>(id)));
  }
  const CountingDeadline deadline(2);
  Budget budget;
  budget.deadline = &deadline;
  const Plan plan = core::plan(c.obj(), kT0, budget);
  EXPECT_TRUE(plan.stats.deadlinePassed);
  EXPECT_TRUE(plan.stats.budgetExhausted);
  EXPECT_EQ(plan.stats.backfillDepth, 2u);
  EXPECT_TRUE(testing::pendingOf(plan, 3).estimatedStart.has_value());
  EXPECT_FALSE(testing::pendingOf(plan, 5).estimatedStart.has_value());
}

}  // namespace
}  // namespace kubeslurm::core
