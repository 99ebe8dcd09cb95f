// Pending reasons and dependencies (job_scheduler.c, job_mgr.c; reference/slurm-22.05.md
// "Dependencies", "Job arrays", "Other pending reasons").
#include <gtest/gtest.h>

#include "tests/unit/core/builders.h"

namespace kubeslurm::core {
namespace {

using slurm::DependencyType;
using slurm::JobState;
using slurm::PendingReason;
using testing::dep;
using testing::idx;
using testing::kHour;
using testing::kT0;
using testing::MakeCluster;
using testing::MakeJob;
using testing::referenceCluster;

FinishedJob finished(JobId id, JobState state, std::int32_t exitCode = 0, Time end = kT0 - 60) {
  FinishedJob f;
  f.id = id;
  f.state = state;
  f.exitCode = exitCode;
  f.startTime = end - 30;
  f.endTime = end;
  return f;
}

struct DependencyCase {
  const char* name;
  slurm::DependencySpec spec;
  std::vector<FinishedJob> finished;
  std::vector<Job> others;  // pending/running jobs besides the dependent one (id 100)
  PendingReason want;       // kNone: it starts
};

class Dependencies : public ::testing::TestWithParam<DependencyCase> {};

TEST_P(Dependencies, Reason) {
  const DependencyCase& dc = GetParam();
  MakeCluster c = referenceCluster();
  for (const Job& j : dc.others) c.job(j);
  c.ref().finished = dc.finished;
  c.job(MakeJob().id(100).nodes(1).dependency(dc.spec).submit(kT0 + 100));
  const Plan plan = core::plan(c.obj(), kT0 + 200, Budget{});
  if (dc.want == PendingReason::kNone) {
    EXPECT_NE(testing::findStart(plan, 100), nullptr) << dc.name;
  } else {
    EXPECT_EQ(testing::pendingOf(plan, 100).reason, dc.want) << dc.name;
  }
}

Job runningJob(JobId id, Time start = kT0 - 100) {
  return MakeJob().id(id).nodes(1).gpus(1).time(10 * kHour).running(start, {idx(8)});
}

slurm::DependencySpec afterDelay(JobId id, std::uint32_t minutes) {
  slurm::DependencySpec s;
  s.terms.push_back({DependencyType::kAfter, {{id, std::nullopt, minutes}}});
  return s;
}

slurm::DependencySpec arrayDep(DependencyType type, JobId id, std::optional<std::int64_t> task) {
  slurm::DependencySpec s;
  s.terms.push_back({type, {{id, task, 0}}});
  return s;
}

INSTANTIATE_TEST_SUITE_P(
    Slurm, Dependencies,
    ::testing::Values(
        // "afterok:99999 (unknown job) is accepted and runs at once".
        DependencyCase{"afterok unknown",
                       dep(DependencyType::kAfterOk, {99999}),
                       {},
                       {},
                       PendingReason::kNone},
        // "10 b PD afterok:9(unfulfilled) (Dependency)": the target still runs.
        DependencyCase{"afterok running",
                       dep(DependencyType::kAfterOk, {9}),
                       {},
                       {runningJob(9)},
                       PendingReason::kDependency},
        DependencyCase{"afterok completed",
                       dep(DependencyType::kAfterOk, {9}),
                       {finished(9, JobState::kCompleted)},
                       {},
                       PendingReason::kNone},
        // "12 g PD afterok:11(failed) (DependencyNeverSatisfied)" after 11 exited 3.
        DependencyCase{"afterok failed",
                       dep(DependencyType::kAfterOk, {11}),
                       {finished(11, JobState::kFailed, 3)},
                       {},
                       PendingReason::kDependencyNeverSatisfied},
        // "afternotok:11 ran".
        DependencyCase{"afternotok failed",
                       dep(DependencyType::kAfterNotOk, {11}),
                       {finished(11, JobState::kFailed, 3)},
                       {},
                       PendingReason::kNone},
        DependencyCase{"afternotok completed",
                       dep(DependencyType::kAfterNotOk, {11}),
                       {finished(11, JobState::kCompleted)},
                       {},
                       PendingReason::kDependencyNeverSatisfied},
        DependencyCase{"afterany cancelled",
                       dep(DependencyType::kAfterAny, {11}),
                       {finished(11, JobState::kCancelled)},
                       {},
                       PendingReason::kNone},
        DependencyCase{"afterany running",
                       dep(DependencyType::kAfterAny, {9}),
                       {},
                       {runningJob(9)},
                       PendingReason::kDependency},
        // after: once the target has started (+delay minutes after its start).
        DependencyCase{"after started",
                       dep(DependencyType::kAfter, {9}),
                       {},
                       {runningJob(9)},
                       PendingReason::kNone},
        DependencyCase{"after pending",
                       dep(DependencyType::kAfter, {9}),
                       {},
                       {MakeJob().id(9).nodes(1).held()},
                       PendingReason::kDependency},
        DependencyCase{"after +5 not yet",
                       afterDelay(9, 5),
                       {},
                       {runningJob(9, kT0)},
                       PendingReason::kDependency},
        DependencyCase{"after +5 passed",
                       afterDelay(9, 5),
                       {},
                       {runningJob(9, kT0 - 300)},
                       PendingReason::kNone},
        // ',' needs all; '?' needs one.
        DependencyCase{"all of ok+running",
                       dep(DependencyType::kAfterOk, {8, 9}),
                       {finished(8, JobState::kCompleted)},
                       {runningJob(9)},
                       PendingReason::kDependency},
        DependencyCase{"any of ok+running",
                       dep(DependencyType::kAfterOk, {8, 9}, true),
                       {finished(8, JobState::kCompleted)},
                       {runningJob(9)},
                       PendingReason::kNone},
        DependencyCase{"any of failed+failed",
                       dep(DependencyType::kAfterOk, {8, 9}, true),
                       {finished(8, JobState::kFailed, 1), finished(9, JobState::kTimeout)},
                       {},
                       PendingReason::kDependencyNeverSatisfied},
        // Whole arrays ("afterok:5_*"): every task must complete.
        DependencyCase{"array all ok",
                       arrayDep(DependencyType::kAfterOk, 5, slurm::kAllArrayTasks),
                       {[] {
                         FinishedJob f = finished(5, JobState::kCompleted);
                         f.arrayJobId = 5;
                         f.arrayTaskId = 0;
                         return f;
                       }()},
                       {MakeJob().id(6).nodes(1).held().arrayTask(5, 1)},
                       PendingReason::kDependency},
        // A single task ("afterok:5_3").
        DependencyCase{"array task done",
                       arrayDep(DependencyType::kAfterOk, 5, 3),
                       {[] {
                         FinishedJob f = finished(7, JobState::kCompleted);
                         f.arrayJobId = 5;
                         f.arrayTaskId = 3;
                         return f;
                       }()},
                       {MakeJob().id(6).nodes(1).held().arrayTask(5, 1)},
                       PendingReason::kNone},
        // singleton: another job of the same name and user is running.
        DependencyCase{"singleton blocked",
                       [] {
                         slurm::DependencySpec s;
                         s.terms.push_back({DependencyType::kSingleton, {}});
                         return s;
                       }(),
                       {},
                       {runningJob(9)},
                       PendingReason::kDependency},
        DependencyCase{"singleton alone",
                       [] {
                         slurm::DependencySpec s;
                         s.terms.push_back({DependencyType::kSingleton, {}});
                         return s;
                       }(),
                       {},
                       {[] {
                         Job j = runningJob(9);
                         j.name = "other";
                         return j;
                       }()},
                       PendingReason::kNone}),
    [](const ::testing::TestParamInfo<DependencyCase>& param) {
      return "Case" + std::to_string(param.index);
    });

// squeue %E: "afterok:11(failed)" and "afterok:9(unfulfilled)"; fulfilled targets are dropped
// from the display by the formatter, so each target's state is reported.
TEST(Dependencies, ReportsEachTargetsStateForSqueue) {
  MakeCluster c = referenceCluster();
  c.job(runningJob(9));
  c.ref().finished = {finished(8, JobState::kCompleted), finished(11, JobState::kFailed, 3)};
  c.job(MakeJob().id(10).dependency(dep(DependencyType::kAfterOk, {8, 9})));
  c.job(MakeJob().id(12).dependency(dep(DependencyType::kAfterOk, {11})));
  c.job(MakeJob().id(13).dependency(dep(DependencyType::kAfterOk, {8})));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  using S = slurm::DependencyState;
  EXPECT_EQ(testing::pendingOf(plan, 10).dependencyStates,
            (std::vector<S>{S::kFulfilled, S::kUnfulfilled}));
  EXPECT_EQ(testing::pendingOf(plan, 12).dependencyStates, std::vector<S>{S::kFailed});
  EXPECT_NE(testing::findStart(plan, 13), nullptr);
}

TEST(Dependencies, AfterCorrPairsArrayTasks) {
  MakeCluster c = referenceCluster();
  FinishedJob t0 = finished(50, JobState::kCompleted);
  t0.arrayJobId = 50;
  t0.arrayTaskId = 0;
  FinishedJob t1 = finished(51, JobState::kFailed, 1);
  t1.arrayJobId = 50;
  t1.arrayTaskId = 1;
  c.ref().finished = {t0, t1};
  c.job(MakeJob().id(60).nodes(1).arrayTask(60, 0).dependency(
      arrayDep(DependencyType::kAfterCorr, 50, std::nullopt)));
  c.job(MakeJob().id(61).nodes(1).arrayTask(60, 1).dependency(
      arrayDep(DependencyType::kAfterCorr, 50, std::nullopt)));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_NE(testing::findStart(plan, 60), nullptr);
  EXPECT_EQ(testing::pendingOf(plan, 61).reason, PendingReason::kDependencyNeverSatisfied);
}

// ---------------------------------------------------------------------------------------------

struct ReasonCase {
  const char* name;
  Job job;
  PendingReason want;
  std::string detail = {};
};

class Reasons : public ::testing::TestWithParam<ReasonCase> {};

TEST_P(Reasons, AsSlurmShowsThem) {
  const ReasonCase& rc = GetParam();
  MakeCluster c = referenceCluster();
  c.state(7, NodeState::kDown).state(8, NodeState::kDrain);
  c.ref().partitions.push_back([] {
    Partition p;
    p.name = "closed";
    p.nodes = {0, 1};
    p.state = PartitionState::kDown;
    return p;
  }());
  c.ref().partitions.push_back([] {
    Partition p;
    p.name = "idle";
    p.nodes = {0, 1};
    p.state = PartitionState::kInactive;
    return p;
  }());
  c.ref().partitions.push_back([] {
    Partition p;
    p.name = "private";
    p.nodes = {0, 1};
    p.allowedAccounts = {"ml-team"};
    p.maxNodesPerJob = 1;
    return p;
  }());
  c.ref().partitions.push_back([] {
    Partition p;
    p.name = "small-memory";
    p.nodes = {0, 1};
    p.maxMemoryBytesPerNode = std::uint64_t{64} << 30;  // MaxMemPerNode=65536
    return p;
  }());
  c.job(rc.job);
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  const PendingDecision& d = testing::pendingOf(plan, rc.job.id);
  EXPECT_EQ(d.reason, rc.want) << rc.name;
  EXPECT_EQ(d.reasonDetail, rc.detail) << rc.name;
}

INSTANTIATE_TEST_SUITE_P(
    Slurm, Reasons,
    ::testing::Values(
        ReasonCase{"held", MakeJob().id(1).held(), PendingReason::kJobHeldUser},
        ReasonCase{"admin hold", MakeJob().id(1).adminPriority(0), PendingReason::kJobHeldAdmin},
        ReasonCase{"begin", MakeJob().id(1).begin(kT0 + 60), PendingReason::kBeginTime},
        // "(PartitionTimeLimit) (--time above MaxTime)".
        ReasonCase{"time limit", MakeJob("debug").id(1).time(2 * kHour),
                   PendingReason::kPartitionTimeLimit},
        // "(PartitionNodeLimit) (--nodes=9)".
        ReasonCase{"node limit", MakeJob().id(1).nodes(9), PendingReason::kPartitionNodeLimit},
        ReasonCase{"MaxNodes", MakeJob("private").id(1).account("ml-team").nodes(2),
                   PendingReason::kPartitionNodeLimit},
        ReasonCase{"account", MakeJob("private").id(1).account("other"),
                   PendingReason::kAccountNotAllowed},
        // job_limits_check's _valid_pn_min_mem: "(MaxMemPerLimit)" past MaxMemPerNode; at the
        // limit the job runs.
        ReasonCase{"MaxMemPerNode",
                   MakeJob("small-memory").id(1).memory((std::uint64_t{64} << 30) + 1),
                   PendingReason::kMaxMemPerLimit},
        ReasonCase{"down", MakeJob("closed").id(1), PendingReason::kPartitionDown},
        ReasonCase{"inactive", MakeJob("idle").id(1), PendingReason::kPartitionInactive},
        // "(ReqNodeNotAvail, UnavailableNodes:gpu-node-007) (--nodelist of a down node)".
        ReasonCase{"down -w", MakeJob().id(1).require({"gpu-node-007"}),
                   PendingReason::kReqNodeNotAvail, "UnavailableNodes:gpu-node-007"},
        ReasonCase{
            "down+drained -w",
            MakeJob().id(1).nodes(3).require({"gpu-node-001", "gpu-node-007", "gpu-node-008"}),
            PendingReason::kReqNodeNotAvail, "UnavailableNodes:gpu-node-[007-008]"},
        // 6 usable nodes for 7: Resources (Slurm rejects it at submit; once queued it waits).
        ReasonCase{"too few up", MakeJob().id(1).nodes(7).gpus(8), PendingReason::kResources}),
    [](const ::testing::TestParamInfo<ReasonCase>& param) {
      return "Case" + std::to_string(param.index);
    });

// "6_[2-7%2] ... (JobArrayTaskLimit)" while 6_0 and 6_1 run; tasks run 2 at a time.
TEST(Arrays, ThrottleHoldsTasksBeyondTheLimit) {
  MakeCluster c = referenceCluster();
  c.job(MakeJob().id(7).nodes(1).gpus(1).arrayTask(6, 0, 2).running(kT0 - 2, {idx(1)}));
  c.job(MakeJob().id(8).nodes(1).gpus(1).arrayTask(6, 1, 2).running(kT0 - 2, {idx(2)}));
  for (std::uint32_t t = 2; t <= 7; ++t) {
    c.job(MakeJob().id(100 + t).nodes(1).gpus(1).arrayTask(6, t, 2));
  }
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_TRUE(plan.starts.empty());
  for (std::uint32_t t = 2; t <= 7; ++t) {
    EXPECT_EQ(testing::pendingOf(plan, 100 + t).reason, PendingReason::kJobArrayTaskLimit);
  }
}

TEST(Arrays, StartsUpToTheLimitInOneCycle) {
  MakeCluster c = referenceCluster();
  for (std::uint32_t t = 0; t <= 7; ++t) {
    c.job(MakeJob().id(100 + t).nodes(1).gpus(1).arrayTask(6, t, 2).submit(kT0 + t));
  }
  const Plan plan = core::plan(c.obj(), kT0 + 10, Budget{});
  ASSERT_EQ(plan.starts.size(), 2u);
  EXPECT_EQ(plan.starts[0].jobId, 100u);
  EXPECT_EQ(plan.starts[1].jobId, 101u);
  EXPECT_EQ(testing::pendingOf(plan, 102).reason, PendingReason::kJobArrayTaskLimit);
}

// Tasks whose gangs are still being bound are out of the plan but hold their %N slots: the next
// plan must not start two more while the first two bind.
TEST(Arrays, TasksBeingBoundHoldTheirSlots) {
  MakeCluster c = referenceCluster();
  for (std::uint32_t t = 2; t <= 3; ++t) {
    c.job(MakeJob().id(100 + t).nodes(1).gpus(1).arrayTask(6, t, 2));
  }
  Snapshot snapshot = c.obj();
  for (std::uint32_t t = 0; t <= 1; ++t) {
    snapshot.unplanned.push_back(
        UnplannedJob{.id = 100 + t, .arrayJobId = 6, .arrayTaskId = t, .starting = true});
  }
  Plan plan = core::plan(snapshot, kT0, Budget{});
  EXPECT_TRUE(plan.starts.empty());
  EXPECT_EQ(testing::pendingOf(plan, 102).reason, PendingReason::kJobArrayTaskLimit);
  // Left out for another cause (an invalid spec), a task holds no slot.
  for (UnplannedJob& u : snapshot.unplanned) u.starting = false;
  plan = core::plan(snapshot, kT0, Budget{});
  EXPECT_EQ(plan.starts.size(), 2u);
}

// Required-node jobs that cannot start close only their nodes, not the whole partition.
// MaxMemPerNode is a limit, not a wait: a job asking exactly that much per node starts.
TEST(Reasons, MaxMemPerNodeAdmitsAJobAtTheLimit) {
  MakeCluster c = referenceCluster();
  c.ref().partitions[0].maxMemoryBytesPerNode = std::uint64_t{64} << 30;
  c.job(MakeJob().id(1).memory(std::uint64_t{64} << 30));
  c.job(MakeJob().id(2).memory((std::uint64_t{64} << 30) + 1));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_NE(testing::findStart(plan, 1), nullptr);
  EXPECT_EQ(testing::pendingOf(plan, 2).reason, PendingReason::kMaxMemPerLimit);
}

// A job that takes all of each node's memory (no --mem, no default) is measured against
// MaxMemPerNode by the partition's first node (job_mgr.c _valid_pn_min_mem: pn_min_memory 0 is
// _mem_per_node_part): on 500 GiB nodes under a 64 GiB limit it waits MaxMemPerLimit, for good,
// as on Slurm; under a limit of the node's size it starts.
TEST(Reasons, MaxMemPerNodeMeasuresAWholeMemoryJobByThePartitionsFirstNode) {
  MakeCluster c = referenceCluster();
  c.ref().partitions[0].maxMemoryBytesPerNode = std::uint64_t{64} << 30;
  Job whole = MakeJob().id(1).obj();
  whole.allNodeMemory = true;
  c.job(whole);
  EXPECT_EQ(testing::pendingOf(core::plan(c.obj(), kT0, Budget{}), 1).reason,
            PendingReason::kMaxMemPerLimit);
  c.ref().partitions[0].maxMemoryBytesPerNode = 500 * testing::kGiB;
  EXPECT_NE(testing::findStart(core::plan(c.obj(), kT0, Budget{}), 1), nullptr);
}

TEST(Reasons, RequiredNodeJobsDoNotBlockThePartition) {
  MakeCluster c = referenceCluster();
  c.job(MakeJob().nodes(1).gpus(8).time(kHour).running(kT0, {idx(1)}));
  c.job(MakeJob().id(10).nodes(1).gpus(8).require({"gpu-node-001"}).adminPriority(100));
  c.job(MakeJob().id(11).nodes(1).gpus(8).adminPriority(50));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_EQ(testing::pendingOf(plan, 10).reason, PendingReason::kResources);
  const Start* s = testing::findStart(plan, 11);
  ASSERT_NE(s, nullptr);
  EXPECT_FALSE(s->backfilled);
}

TEST(Reasons, DrainedAndNotReadyNodesTakeNoNewWork) {
  MakeCluster c(3);
  c.partition("train");
  c.state(1, NodeState::kDrain).state(2, NodeState::kNotReady);
  c.job(MakeJob().id(1).nodes(2).gpus(1));
  c.job(MakeJob().id(2).nodes(1).gpus(1).submit(kT0 + 1));
  const Plan plan = core::plan(c.obj(), kT0 + 5, Budget{});
  EXPECT_EQ(testing::findStart(plan, 1), nullptr);
  const Start* s = testing::findStart(plan, 2);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->nodes, std::vector<NodeIndex>{idx(3)});
}

}  // namespace
}  // namespace kubeslurm::core
