#include "controllers/snapshot.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "controllers/job_object.h"
#include "tests/unit/controllers/cluster_objects.h"

namespace kubeslurm::controllers {
namespace {

using api::Json;

constexpr core::Time kNow = 1795000000;  // 2026-11-18
constexpr std::uint64_t kGi = std::uint64_t{1} << 30;

using fakes::account;
using fakes::inferencePod;
using fakes::node;
using fakes::partition;
using fakes::rankPod;
using fakes::slurmJob;

core::NodeIndex indexOf(const SnapshotIndex& index, const std::string& name) {
  auto it = std::find(index.nodeNames.begin(), index.nodeNames.end(), name);
  EXPECT_NE(it, index.nodeNames.end()) << name;
  return static_cast<core::NodeIndex>(it - index.nodeNames.begin());
}

const core::Node& nodeOf(const SnapshotIndex& index, const std::string& name) {
  return index.snapshot.nodes[indexOf(index, name)];
}

const core::Partition* partitionOf(const SnapshotIndex& index, const std::string& name) {
  for (const core::Partition& p : index.snapshot.partitions) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::set<std::string> memberNames(const SnapshotIndex& index, const std::string& name) {
  std::set<std::string> out;
  const core::Partition* p = partitionOf(index, name);
  EXPECT_NE(p, nullptr) << name;
  if (p == nullptr) return out;
  for (core::NodeIndex i : p->nodes) out.insert(index.nodeNames[i]);
  return out;
}

const core::Job* jobOf(const SnapshotIndex& index, core::JobId id) {
  for (const core::Job& job : index.snapshot.jobs) {
    if (job.id == id) return &job;
  }
  return nullptr;
}

ClusterObjects gpuCluster() {
  ClusterObjects objects;
  for (int i = 1; i <= 4; ++i) objects.nodes.push_back(node("gpu-" + std::to_string(i), 8));
  objects.partitions.push_back(partition("gpu", {{"nodes", "gpu-[1-4]"}, {"default", true}}));
  return objects;
}

// DESIGN.md invariant 4: free GPUs = allocatable minus the requests of every non-terminal pod
// bound there, inference included. The GPU is a limit only; the API server's SetDefaults_Pod
// copies it into requests, so it counts.
TEST(Snapshot, InferencePodReducesCapacity) {
  ClusterObjects objects = gpuCluster();
  objects.pods.push_back(inferencePod("llm-7d9f-abcde", "gpu-2", 3));
  const SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  const core::Node& gpu2 = nodeOf(index, "gpu-2");
  EXPECT_EQ(gpu2.allocatable, (core::Resources{8, 95500, 1000 * kGi}));
  EXPECT_EQ(gpu2.foreignUsed, (core::Resources{3, 4000, 16 * kGi}));
  EXPECT_EQ(nodeOf(index, "gpu-1").foreignUsed, core::Resources{});
}

// podIsTerminal: the kubelet releases a Succeeded or Failed pod's resources; a pod not yet bound
// (no spec.nodeName) holds nothing anywhere.
TEST(Snapshot, TerminalAndUnboundPodsHoldNothing) {
  ClusterObjects objects = gpuCluster();
  objects.pods.push_back(inferencePod("done", "gpu-1", 4, "Succeeded"));
  objects.pods.push_back(inferencePod("crashed", "gpu-1", 4, "Failed"));
  objects.pods.push_back(inferencePod("unbound", "", 4, "Pending"));
  objects.pods.push_back(inferencePod("elsewhere", "not-a-node", 4));
  const SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  for (const core::Node& n : index.snapshot.nodes) EXPECT_EQ(n.foreignUsed, core::Resources{});
}

TEST(Snapshot, RunningJobHoldsItsNodesThroughItsAllocationInRankOrder) {
  ClusterObjects objects = gpuCluster();
  objects.jobs.push_back(slurmJob("train", 41, "RUNNING", Json::object(),
                                  {{"startTime", api::formatTimestamp(kNow - 300)}}));
  // Listed out of order: the allocation follows the rank label, not the informer.
  objects.pods.push_back(rankPod("train", 1, "gpu-1"));
  objects.pods.push_back(rankPod("train", 0, "gpu-3"));
  const SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  const core::Job* job = jobOf(index, 41);
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->phase, core::JobPhase::kRunning);
  EXPECT_EQ(job->allocatedNodes,
            (std::vector<core::NodeIndex>{indexOf(index, "gpu-3"), indexOf(index, "gpu-1")}));
  EXPECT_EQ(job->startTime, kNow - 300);
  EXPECT_EQ(job->gpusPerNode, 8U);
  EXPECT_EQ(index.jobKeys.at(41), "team-a/train");
  // Not counted twice: the core charges the allocation, foreignUsed stays empty.
  EXPECT_EQ(nodeOf(index, "gpu-1").foreignUsed, core::Resources{});
  EXPECT_EQ(nodeOf(index, "gpu-3").foreignUsed, core::Resources{});
}

// Our own pods that no running job accounts for still occupy the kubelet: a cancelled gang in
// its grace period, or a rank of an earlier attempt. They are load the core must not hand out.
TEST(Snapshot, OurPodsWithoutARunningJobStillHoldCapacity) {
  ClusterObjects objects = gpuCluster();
  objects.jobs.push_back(slurmJob("stopped", 42, "CANCELLED"));
  api::Pod terminating = rankPod("stopped", 0, "gpu-1");
  terminating.metadata.deletionTimestamp = kNow - 5;
  objects.pods.push_back(terminating);
  objects.jobs.push_back(slurmJob("again", 43, "RUNNING", Json::object(), {{"restarts", 1}}));
  objects.pods.push_back(rankPod("again", 0, "gpu-2", /*attempt=*/0));  // stale
  objects.pods.push_back(rankPod("again", 0, "gpu-3", /*attempt=*/1));
  objects.pods.push_back(rankPod("again", 1, "gpu-4", /*attempt=*/1));
  const SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  EXPECT_EQ(nodeOf(index, "gpu-1").foreignUsed.gpus, 8U);
  EXPECT_EQ(nodeOf(index, "gpu-2").foreignUsed.gpus, 8U);
  EXPECT_EQ(nodeOf(index, "gpu-3").foreignUsed.gpus, 0U);
  const core::Job* again = jobOf(index, 43);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->restarts, 1U);
  EXPECT_EQ(again->allocatedNodes,
            (std::vector<core::NodeIndex>{indexOf(index, "gpu-3"), indexOf(index, "gpu-4")}));
}

TEST(Snapshot, NodeStateFeaturesAndTaints) {
  ClusterObjects objects;
  objects.nodes.push_back(node("gpu-1", 8,
                               {{"kubeslurm.io/features", "ib, nvlink"},
                                {"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}}));
  objects.nodes.push_back(node("gpu-2", 8, Json::object(), "False"));
  objects.nodes.push_back(node("gpu-3", 8, Json::object(), "Unknown"));
  objects.nodes.push_back(node("gpu-4", 8, Json::object(), ""));
  api::Node cordoned = node("gpu-5", 8);
  cordoned.unschedulable = true;
  cordoned.taints.push_back(api::Taint{"node.kubernetes.io/unschedulable", "", "NoSchedule"});
  objects.nodes.push_back(cordoned);
  const SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  EXPECT_EQ(nodeOf(index, "gpu-1").state, core::NodeState::kUp);
  // The GPU product is a feature (-C NVIDIA-H100-80GB-HBM3), and its words the node's GPU types
  // (--gres=gpu:h100:8; job_request.h).
  EXPECT_EQ(nodeOf(index, "gpu-1").features,
            (std::vector<std::string>{"ib", "nvlink", "NVIDIA-H100-80GB-HBM3", "gpu-type:nvidia",
                                      "gpu-type:h100", "gpu-type:80gb", "gpu-type:hbm3"}));
  EXPECT_EQ(nodeOf(index, "gpu-2").state, core::NodeState::kNotReady);
  EXPECT_EQ(nodeOf(index, "gpu-3").state, core::NodeState::kNotReady);  // node lease expired
  EXPECT_EQ(nodeOf(index, "gpu-4").state, core::NodeState::kNotReady);  // never reported
  EXPECT_EQ(nodeOf(index, "gpu-5").state, core::NodeState::kDrain);     // kubectl cordon
  EXPECT_EQ(nodeOf(index, "gpu-5").taints,
            (std::vector<core::Taint>{{"node.kubernetes.io/unschedulable", "", "NoSchedule"}}));
}

TEST(Snapshot, NodesAreIndexedInNaturalNameOrder) {
  ClusterObjects objects;
  for (const char* name : {"gpu-10", "gpu-2", "gpu-1"}) objects.nodes.push_back(node(name, 8));
  const SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  EXPECT_EQ(index.nodeNames, (std::vector<std::string>{"gpu-1", "gpu-2", "gpu-10"}));
}

TEST(Snapshot, PartitionMembersByHostlistAndBySelector) {
  ClusterObjects objects;
  objects.nodes.push_back(node("gpu-1", 8, {{"pool", "h100"}, {"zone", "a"}}));
  objects.nodes.push_back(node("gpu-2", 8, {{"pool", "h100"}, {"zone", "b"}}));
  objects.nodes.push_back(node("gpu-3", 8, {{"pool", "a100"}}));
  objects.nodes.push_back(node("gpu-4", 8, {{"pool", "h100"}, {"debug", ""}}));
  objects.partitions.push_back(partition("listed", {{"nodes", "gpu-[1-2],gpu-9"}}));
  objects.partitions.push_back(partition(
      "h100", {{"nodeSelector",
                {{"matchLabels", {{"pool", "h100"}}},
                 {"matchExpressions",
                  Json::array({{{"key", "zone"}, {"operator", "NotIn"}, {"values", {"b"}}},
                               {{"key", "debug"}, {"operator", "DoesNotExist"}}})}}}}));
  objects.partitions.push_back(partition(
      "both", {{"nodes", "gpu-[2-4]"},
               {"nodeSelector",
                {{"matchExpressions",
                  Json::array({{{"key", "pool"}, {"operator", "In"}, {"values", {"h100"}}}})}}}}));
  objects.partitions.push_back(partition(
      "debug",
      {{"nodeSelector",
        {{"matchExpressions", Json::array({{{"key", "debug"}, {"operator", "Exists"}}})}}}}));
  const SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  // A hostlist name that is no node (gpu-9) is skipped: nodes may join later.
  EXPECT_EQ(memberNames(index, "listed"), (std::set<std::string>{"gpu-1", "gpu-2"}));
  // NotIn is satisfied by a node without the label (gpu-3 fails matchLabels, not NotIn).
  EXPECT_EQ(memberNames(index, "h100"), (std::set<std::string>{"gpu-1"}));
  // Nodes= and nodeSelector together: a member must match both (the Partition CRD).
  EXPECT_EQ(memberNames(index, "both"), (std::set<std::string>{"gpu-2", "gpu-4"}));
  EXPECT_EQ(memberNames(index, "debug"), (std::set<std::string>{"gpu-4"}));
}

TEST(Snapshot, PartitionLimitsAndABadHostlist) {
  ClusterObjects objects = gpuCluster();
  objects.partitions.push_back(partition("prio", {{"nodes", "gpu-[1-4]"},
                                                  {"maxTime", "2-00:00:00"},
                                                  {"defaultTime", "60"},
                                                  {"priorityTier", 10},
                                                  {"priorityJobFactor", 5},
                                                  {"preemptMode", "REQUEUE"},
                                                  {"maxNodesPerJob", 2},
                                                  {"allowedAccounts", {"ml", "vision"}},
                                                  {"state", "DRAIN"}}));
  objects.partitions.push_back(partition("broken", {{"nodes", "gpu-[3-1]"}}));
  const SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  const core::Partition* prio = partitionOf(index, "prio");
  ASSERT_NE(prio, nullptr);
  EXPECT_EQ(prio->maxTime, 2 * 86400);
  EXPECT_EQ(prio->defaultTime, 3600);  // Slurm reads a bare number as minutes
  EXPECT_EQ(prio->priorityTier, 10U);
  EXPECT_EQ(prio->priorityJobFactor, 5U);
  EXPECT_EQ(prio->preemptMode, core::PreemptMode::kRequeue);
  EXPECT_EQ(prio->maxNodesPerJob, 2U);
  EXPECT_EQ(prio->allowedAccounts, (std::vector<std::string>{"ml", "vision"}));
  EXPECT_EQ(prio->state, core::PartitionState::kDrain);
  const core::Partition* gpu = partitionOf(index, "gpu");
  ASSERT_NE(gpu, nullptr);
  EXPECT_TRUE(gpu->isDefault);
  EXPECT_EQ(gpu->maxTime, core::kUnlimited);
  EXPECT_FALSE(gpu->defaultTime.has_value());
  EXPECT_EQ(gpu->preemptMode, core::PreemptMode::kOff);
  // slurmctld refuses a Nodes= it cannot parse; here the partition gets no nodes and a problem.
  EXPECT_TRUE(memberNames(index, "broken").empty());
  ASSERT_EQ(index.partitionProblems.size(), 1U);
  EXPECT_EQ(index.partitionProblems[0].key, "broken");
}

// Memory as slurmctld allocates it. Without DefMemPer*, a job that asks for no memory gets all
// of each node's memory, so two 4-GPU jobs do not share an 8-GPU node; with DefMemPerGPU each
// takes its GPUs' share and they do (slurm.conf's advice for GPU partitions).
TEST(Snapshot, WithoutAMemoryDefaultAJobHoldsItsNodesMemory) {
  ClusterObjects objects;
  objects.nodes.push_back(node("gpu-1", 8));
  objects.partitions.push_back(partition("gpu", {{"nodes", "gpu-1"}, {"default", true}}));
  objects.jobs.push_back(slurmJob("a", 1, "PENDING", {{"nodes", 1}, {"gpusPerNode", 4}}));
  objects.jobs.push_back(slurmJob("b", 2, "PENDING", {{"nodes", 1}, {"gpusPerNode", 4}}));
  const SnapshotIndex whole = buildSnapshot(objects, {}, kNow);
  const core::Job* a = jobOf(whole, 1);
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(a->allNodeMemory);
  EXPECT_FALSE(a->exclusive);  // it is charged its GPUs, not the node's
  EXPECT_EQ(core::plan(whole.snapshot, kNow, core::Budget{}).starts.size(), 1U);

  objects.partitions[0].spec.defMemPerGpu = 100 * 1024;
  const SnapshotIndex perGpu = buildSnapshot(objects, {}, kNow);
  const core::Job* shared = jobOf(perGpu, 1);
  ASSERT_NE(shared, nullptr);
  EXPECT_FALSE(shared->allNodeMemory);
  EXPECT_EQ(shared->memoryBytesPerNode, 400 * kGi);
  EXPECT_EQ(core::plan(perGpu.snapshot, kNow, core::Budget{}).starts.size(), 2U);

  // MaxMemPerNode reaches the core as bytes; both forms of a setting are a problem, and the node
  // form is the one kept, as slurmctld keeps it.
  objects.partitions[0].spec.maxMemPerNode = 300 * 1024;
  objects.partitions[0].spec.maxMemPerCpu = 1024;
  objects.partitions[0].spec.defMemPerNode = 1024;
  objects.partitions[0].spec.defMemPerCpu = 1024;
  const SnapshotIndex both = buildSnapshot(objects, {}, kNow);
  ASSERT_NE(partitionOf(both, "gpu"), nullptr);
  EXPECT_EQ(partitionOf(both, "gpu")->maxMemoryBytesPerNode, 300 * kGi);
  ASSERT_EQ(both.partitionProblems.size(), 2U);
  EXPECT_EQ(both.partitionProblems[0].reason, "InvalidMemory");
  EXPECT_EQ(both.partitionProblems[0].message,
            "DefMemPerCPU ignored, since it's mutually exclusive with DefMemPerNode");
  EXPECT_EQ(both.partitionProblems[1].message,
            "MaxMemPerCPU ignored, since it's mutually exclusive with MaxMemPerNode");
}

TEST(Snapshot, PendingJobGoesToTheDefaultPartitionWithItsDefaults) {
  ClusterObjects objects = gpuCluster();
  objects.partitions.push_back(partition("other", {{"nodes", "gpu-1"}}));
  objects.partitions[0].spec.defaultTime = api::SlurmDuration{"4:00:00", {4 * 3600}};
  objects.jobs.push_back(slurmJob("sweep", 50, "PENDING", {{"user", nullptr}},
                                  {{"arrayJobId", 49},
                                   {"arrayTaskId", 1},
                                   {"restarts", 2},
                                   {"submitTime", api::formatTimestamp(kNow - 120)}}));
  objects.jobs.push_back(slurmJob("no-id", 0, "PENDING"));
  objects.jobs.mutableAt(objects.jobs.size() - 1)
      .status->jobId.reset();  // not yet given an id: not schedulable
  SnapshotOptions options;
  options.defaultUser = "nobody";
  const SnapshotIndex index = buildSnapshot(objects, options, kNow);
  ASSERT_EQ(index.snapshot.jobs.size(), 1U);
  const core::Job& job = index.snapshot.jobs[0];
  EXPECT_EQ(job.id, 50U);
  EXPECT_EQ(job.phase, core::JobPhase::kPending);
  EXPECT_EQ(job.partition, "gpu");     // spec.default
  EXPECT_EQ(job.timeLimit, 4 * 3600);  // the partition's DefaultTime
  EXPECT_EQ(job.user, "nobody");       // no spec.user
  EXPECT_EQ(job.arrayJobId, std::optional<core::JobId>(49));
  EXPECT_EQ(job.arrayTaskId, std::optional<std::uint32_t>(1));
  EXPECT_EQ(job.restarts, 2U);
  EXPECT_EQ(job.submitTime, kNow - 120);
  EXPECT_EQ(job.minNodes, 2U);
  EXPECT_TRUE(index.problems.empty());
}

// After a gang start timeout the job's status says when it may be planned again; the core
// sees that as its begin time, so a new leader honours the backoff too.
TEST(Snapshot, AGangStartBackoffIsTheJobsBeginTime) {
  ClusterObjects objects = gpuCluster();
  objects.jobs.push_back(
      slurmJob("stuck", 51, "PENDING", Json::object(),
               {{"startFailures", 1}, {"retryStartAfter", api::formatTimestamp(kNow + 60)}}));
  const SnapshotIndex index = buildSnapshot(objects, SnapshotOptions{}, kNow);
  ASSERT_EQ(index.snapshot.jobs.size(), 1U);
  EXPECT_EQ(index.snapshot.jobs[0].beginTime, kNow + 60);
}

TEST(Snapshot, TheOnlyPartitionIsTheDefault) {
  ClusterObjects objects = gpuCluster();
  objects.partitions[0].spec.isDefault = false;
  objects.jobs.push_back(slurmJob("a", 60, "REQUEUED"));
  SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  ASSERT_NE(jobOf(index, 60), nullptr);
  EXPECT_EQ(jobOf(index, 60)->partition, "gpu");
  EXPECT_EQ(jobOf(index, 60)->submitTime, kNow - 600);  // creationTimestamp

  objects.partitions.push_back(partition("cpu", {{"nodes", "gpu-1"}}));
  index = buildSnapshot(objects, {}, kNow);
  EXPECT_EQ(jobOf(index, 60), nullptr);
  ASSERT_EQ(index.problems.size(), 1U);
  EXPECT_EQ(index.problems[0].message, "No partition specified or system default partition");
}

// sbatch -p nope: "Batch job submission failed: Invalid partition name specified". The job is
// not dropped (invariant 5): it becomes a problem the job controller reports as a condition.
TEST(Snapshot, UnknownPartitionIsAProblem) {
  ClusterObjects objects = gpuCluster();
  objects.jobs.push_back(slurmJob("typo", 70, "PENDING", {{"partition", "gpuu"}}));
  const SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  EXPECT_TRUE(index.snapshot.jobs.empty());
  EXPECT_TRUE(index.jobKeys.empty());
  ASSERT_EQ(index.problems.size(), 1U);
  EXPECT_EQ(index.problems[0].key, "team-a/typo");
  EXPECT_EQ(index.problems[0].reason, "InvalidPartition");
  EXPECT_EQ(index.problems[0].message, "Invalid partition name specified: gpuu");
}

// A Pyxis mount the partition does not allow could never start: the job waits outside the plan
// with a condition that says which entry and what is allowed; allowing it lets the job plan.
TEST(Snapshot, DisallowedContainerMountIsAProblem) {
  ClusterObjects objects = gpuCluster();
  objects.jobs.push_back(
      slurmJob("mnt", 71, "PENDING", {{"container", {{"mounts", {"/datasets/x:/data:ro"}}}}}));
  SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  EXPECT_TRUE(index.snapshot.jobs.empty());
  ASSERT_EQ(index.problems.size(), 1U);
  EXPECT_EQ(index.problems[0].reason, "InvalidContainerMounts");
  EXPECT_EQ(index.problems[0].message,
            "--container-mounts: /datasets/x:/data:ro: /datasets/x is not a path partition gpu "
            "allows to mount (it allows none)");

  objects.partitions[0] = partition(
      "gpu", {{"nodes", "gpu-[1-4]"},
              {"default", true},
              {"allowedMounts",
               {{{"path", "/datasets"},
                 {"volume", {{"persistentVolumeClaim", {{"claimName", "datasets"}}}}}}}}});
  index = buildSnapshot(objects, {}, kNow);
  EXPECT_TRUE(index.problems.empty());
  EXPECT_TRUE(index.partitionProblems.empty());
  ASSERT_NE(jobOf(index, 71), nullptr);

  // A broken list is the partition's problem too.
  objects.partitions[0] =
      partition("gpu", {{"nodes", "gpu-[1-4]"},
                        {"default", true},
                        {"allowedMounts", {{{"path", "datasets"}, {"volume", Json::object()}}}}});
  index = buildSnapshot(objects, {}, kNow);
  ASSERT_EQ(index.partitionProblems.size(), 1U);
  EXPECT_EQ(index.partitionProblems[0].reason, "InvalidAllowedMounts");
  EXPECT_EQ(index.partitionProblems[0].message,
            "spec.allowedMounts[0].path: expected an absolute path");
}

TEST(Snapshot, PendingJobWithAGangInFlightIsNotPlannedAgain) {
  ClusterObjects objects = gpuCluster();
  objects.jobs.push_back(slurmJob("binding", 80, "PENDING"));
  api::Pod unbound = rankPod("binding", 0, "");
  objects.pods.push_back(unbound);
  objects.pods.push_back(rankPod("binding", 1, "gpu-2"));
  const SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  EXPECT_EQ(jobOf(index, 80), nullptr);
  EXPECT_EQ(index.gangsInFlight, (std::set<std::string>{"team-a/binding"}));
  EXPECT_EQ(nodeOf(index, "gpu-2").foreignUsed.gpus, 8U);  // the bound rank still holds gpu-2
}

// A dependency waits while its target exists unfinished, even when the target is out of the
// plan (its gang being bound, or a job that cannot run as written): only a target that is gone
// lifts it. Without this, `sbatch -d afterok:$jid` right after `sbatch` would start at once.
TEST(Snapshot, DependencyOnAJobOutOfThePlanKeepsWaiting) {
  ClusterObjects objects = gpuCluster();
  objects.jobs.push_back(slurmJob("binding", 80, "PENDING"));
  objects.pods.push_back(rankPod("binding", 0, "gpu-1"));
  objects.jobs.push_back(slurmJob("typo", 81, "PENDING", {{"partition", "gpuu"}}));
  objects.jobs.push_back(slurmJob("after-binding", 82, "PENDING", {{"dependency", "afterok:80"}}));
  objects.jobs.push_back(slurmJob("after-typo", 83, "PENDING", {{"dependency", "afterok:81"}}));
  objects.jobs.push_back(slurmJob("after-gone", 84, "PENDING", {{"dependency", "afterok:79"}}));
  const SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  ASSERT_EQ(index.snapshot.unplanned.size(), 2U);
  const core::Plan plan = core::plan(index.snapshot, kNow, {});
  std::map<core::JobId, slurm::PendingReason> reasons;
  for (const core::PendingDecision& p : plan.pending) reasons[p.jobId] = p.reason;
  EXPECT_EQ(reasons.at(82), slurm::PendingReason::kDependency);
  EXPECT_EQ(reasons.at(83), slurm::PendingReason::kDependency);
  ASSERT_EQ(plan.starts.size(), 1U);
  EXPECT_EQ(plan.starts[0].jobId, 84U);  // its target is gone: Slurm lifts the dependency
}

// The ranks of a RUNNING job ended (one failed) before the job controller wrote FAILED: the job
// is not gone, so `afterok` on it keeps waiting rather than starting (the operator suite's
// DependencyChainAfterFailure caught this).
TEST(Snapshot, RunningJobWhoseRanksEndedStillHoldsItsDependants) {
  ClusterObjects objects = gpuCluster();
  objects.jobs.push_back(slurmJob("ended", 90, "RUNNING"));
  objects.pods.push_back(rankPod("ended", 0, "gpu-1", 0, "Failed"));
  objects.pods.push_back(rankPod("ended", 1, "gpu-2", 0, "Succeeded"));
  objects.jobs.push_back(slurmJob("next", 91, "PENDING", {{"dependency", "afterok:90"}}));
  const SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  ASSERT_EQ(index.snapshot.unplanned.size(), 1U);
  EXPECT_EQ(index.snapshot.unplanned[0].id, 90U);
  const core::Plan plan = core::plan(index.snapshot, kNow, {});
  EXPECT_TRUE(plan.starts.empty());
  ASSERT_EQ(plan.pending.size(), 1U);
  EXPECT_EQ(plan.pending[0].reason, slurm::PendingReason::kDependency);
}

// The same job is charged up to its end, from its containers' finishedAt (it may have ended
// while no operator ran, long before this cycle), on the nodes its ranks held.
TEST(Snapshot, RunningJobWhoseRanksEndedIsChargedUpToTheirEnd) {
  ClusterObjects objects = gpuCluster();
  objects.jobs.push_back(slurmJob("ended", 90, "RUNNING", Json::object(),
                                  {{"startTime", api::formatTimestamp(kNow - 3600)}}));
  for (int rank : {1, 0}) {
    api::Pod pod = rankPod("ended", rank, "gpu-" + std::to_string(rank + 1), 0, "Succeeded");
    api::ContainerStatus container;
    container.name = "rank";
    container.state.kind = api::ContainerState::Kind::kTerminated;
    container.state.finishedAt = kNow - 1800 + rank;
    pod.status.containerStatuses.push_back(container);
    objects.pods.push_back(pod);
  }
  const SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  EXPECT_TRUE(index.snapshot.jobs.empty());
  ASSERT_EQ(index.snapshot.ended.size(), 1U);
  const core::EndedJob& ended = index.snapshot.ended[0];
  EXPECT_EQ(ended.endTime, kNow - 1799);
  EXPECT_EQ(ended.job.startTime, kNow - 3600);
  EXPECT_EQ(ended.job.allocatedNodes,
            (std::vector<core::NodeIndex>{indexOf(index, "gpu-1"), indexOf(index, "gpu-2")}));
  EXPECT_EQ(ended.job.gpusPerNode, 8U);
}

// afterok needs COMPLETED and exit status 0; sacct's ExitCode is "status:signal".
TEST(Snapshot, FinishedJobsCarryExitStatusForDependencies) {
  ClusterObjects objects = gpuCluster();
  objects.jobs.push_back(slurmJob("ok", 90, "COMPLETED", Json::object(),
                                  {{"exitCode", "0:0"},
                                   {"startTime", api::formatTimestamp(kNow - 500)},
                                   {"endTime", api::formatTimestamp(kNow - 100)}}));
  objects.jobs.push_back(slurmJob("bad", 91, "FAILED", Json::object(), {{"exitCode", "3:0"}}));
  objects.jobs.push_back(slurmJob("killed", 92, "FAILED", Json::object(), {{"exitCode", "0:9"}}));
  objects.jobs.push_back(slurmJob("late", 93, "TIMEOUT", Json::object(), {{"exitCode", "0:0"}}));
  const SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  ASSERT_EQ(index.snapshot.finished.size(), 4U);
  const auto& f = index.snapshot.finished;
  EXPECT_EQ(f[0].id, 90U);
  EXPECT_EQ(f[0].state, slurm::JobState::kCompleted);
  EXPECT_EQ(f[0].exitCode, 0);
  EXPECT_EQ(f[0].startTime, kNow - 500);
  EXPECT_EQ(f[0].endTime, kNow - 100);
  EXPECT_EQ(f[0].user, "alice");
  EXPECT_EQ(f[1].state, slurm::JobState::kFailed);
  EXPECT_EQ(f[1].exitCode, 3);
  EXPECT_EQ(f[2].state, slurm::JobState::kFailed);
  EXPECT_EQ(f[2].exitCode, 0);
  EXPECT_EQ(f[3].state, slurm::JobState::kTimeout);
  EXPECT_TRUE(index.snapshot.jobs.empty());
}

TEST(Snapshot, DuplicateJobIdKeepsTheFirstAndReportsTheOther) {
  ClusterObjects objects = gpuCluster();
  objects.jobs.push_back(slurmJob("b-second", 100, "PENDING"));
  objects.jobs.push_back(slurmJob("a-first", 100, "PENDING"));
  const SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  EXPECT_EQ(index.jobKeys.at(100), "team-a/a-first");
  ASSERT_EQ(index.problems.size(), 1U);
  EXPECT_EQ(index.problems[0].key, "team-a/b-second");
  EXPECT_EQ(index.problems[0].reason, "DuplicateJobId");
}

TEST(Snapshot, AccountsHangUnderRootWithTheirUsage) {
  ClusterObjects objects = gpuCluster();
  objects.accounts.push_back(
      account("ml", {{"shares", 3}},
              {{"rawUsage", 5000.5}, {"lastDecay", api::formatTimestamp(kNow - 60)}}));
  objects.accounts.push_back(
      account("vision", {{"parent", "ml"}}, {{"lastDecay", api::formatTimestamp(kNow - 30)}}));
  SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  const auto& accounts = index.snapshot.accounts;
  ASSERT_EQ(accounts.size(), 3U);
  EXPECT_EQ(accounts[0].name, "root");
  EXPECT_EQ(accounts[1].name, "ml");
  EXPECT_EQ(accounts[1].parent, "root");
  EXPECT_EQ(accounts[1].shares, 3U);
  EXPECT_DOUBLE_EQ(accounts[1].rawUsage, 5000.5);
  EXPECT_EQ(accounts[2].parent, "ml");
  EXPECT_EQ(accounts[2].shares, 1U);  // the CRD's default
  EXPECT_EQ(index.snapshot.usageTime, kNow - 60);

  objects.accounts.clear();
  index = buildSnapshot(objects, {}, kNow);
  EXPECT_EQ(index.snapshot.usageTime, kNow);
}

// maxSubmitJobs (inherited from the parent account) counts pending and running jobs per user:
// past it, the newest pending jobs wait outside the plan with Slurm's reason and message; another
// user of the account is not affected.
TEST(Snapshot, MaxSubmitJobsKeepsTheNewestJobsOutOfThePlan) {
  ClusterObjects objects = gpuCluster();
  objects.accounts.push_back(account("research", {{"limits", {{"maxSubmitJobs", 2}}}}));
  objects.accounts.push_back(account("ml", {{"parent", "research"}}));
  const Json ml = {{"account", "ml"}};
  objects.jobs.push_back(slurmJob("a", 51, "PENDING", ml));
  objects.jobs.push_back(slurmJob("b", 52, "PENDING", ml));
  objects.jobs.push_back(slurmJob("c", 53, "PENDING", ml));
  objects.jobs.push_back(slurmJob("d", 54, "PENDING", {{"account", "ml"}, {"user", "bob"}}));
  const SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  std::vector<core::JobId> planned;
  for (const core::Job& j : index.snapshot.jobs) planned.push_back(j.id);
  EXPECT_EQ(planned, (std::vector<core::JobId>{51, 52, 54}));
  ASSERT_EQ(index.problems.size(), 1U);
  EXPECT_EQ(index.problems[0].key, "team-a/c");
  EXPECT_EQ(index.problems[0].reason, "AssocMaxSubmitJobLimit");
  EXPECT_EQ(index.problems[0].message,
            "Job violates accounting/QOS policy (job submit limit, user's size and/or time "
            "limits)");
  ASSERT_EQ(index.snapshot.unplanned.size(), 1U);
  EXPECT_EQ(index.snapshot.unplanned[0].id, 53U);
  EXPECT_FALSE(index.jobKeys.contains(53));
}

// An account's defaultQos (inherited) names the QOS of jobs that ask none, else "normal"; a QOS
// outside allowedQos is refused as Slurm refuses it ("Invalid qos specification").
TEST(Snapshot, AccountQosDefaultAndAllowedList) {
  ClusterObjects objects = gpuCluster();
  objects.accounts.push_back(
      account("research", {{"defaultQos", "standby"}, {"allowedQos", {"standby", "high"}}}));
  objects.accounts.push_back(account("ml", {{"parent", "research"}}));
  objects.accounts.push_back(account("ops", Json::object()));
  objects.jobs.push_back(slurmJob("a", 61, "PENDING", {{"account", "ml"}}));
  objects.jobs.push_back(slurmJob("b", 62, "PENDING", {{"account", "ml"}, {"qos", "high"}}));
  objects.jobs.push_back(slurmJob("c", 63, "PENDING", {{"account", "ml"}, {"qos", "normal"}}));
  objects.jobs.push_back(slurmJob("d", 64, "PENDING", {{"account", "ops"}}));
  const SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  std::map<core::JobId, std::string> qos;
  for (const core::Job& j : index.snapshot.jobs) qos[j.id] = j.qos;
  EXPECT_EQ(qos,
            (std::map<core::JobId, std::string>{{61, "standby"}, {62, "high"}, {64, "normal"}}));
  ASSERT_EQ(index.problems.size(), 1U);
  EXPECT_EQ(index.problems[0].key, "team-a/c");
  EXPECT_EQ(index.problems[0].reason, "InvalidQOS");
  EXPECT_EQ(index.problems[0].message, "Invalid qos specification");
}

// spec.limits reach the core: gres/gpu and node TRES, MaxNodes as MaxTRES=node (the smaller of
// the two), MaxWall in seconds, UNLIMITED as no limit.
TEST(Snapshot, AccountLimitsReachTheCore) {
  ClusterObjects objects = gpuCluster();
  const Json spec = {{"limits",
                      {{"maxJobs", 2},
                       {"grpJobs", 5},
                       {"maxNodesPerJob", 4},
                       {"maxWallDurationPerJob", "1-00:00:00"},
                       {"grpTres", {{"gres/gpu", 16}, {"node", 3}, {"cpu", 64}}},
                       {"maxTresPerJob", {{"node", 8}, {"gres/gpu", 32}}}}}};
  objects.accounts.push_back(account("ml", spec));
  objects.accounts.push_back(
      account("open", {{"limits", {{"maxWallDurationPerJob", "UNLIMITED"}}}}));
  const SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  ASSERT_EQ(index.snapshot.accounts.size(), 3U);
  const core::AssociationLimits& ml = index.snapshot.accounts[1].limits;
  EXPECT_EQ(ml.maxJobs, 2U);
  EXPECT_EQ(ml.grpJobs, 5U);
  EXPECT_EQ(ml.grpTres.gpus, 16U);
  EXPECT_EQ(ml.grpTres.nodes, 3U);
  EXPECT_EQ(ml.maxTresPerJob.nodes, 4U);
  EXPECT_EQ(ml.maxTresPerJob.gpus, 32U);
  EXPECT_EQ(ml.maxWallPerJob, 86400);
  EXPECT_EQ(index.snapshot.accounts[2].limits, core::AssociationLimits{});
}

TEST(Snapshot, TopologyFromPartitionLabelsConfOrDefaultLabels) {
  ClusterObjects objects = gpuCluster();
  objects.nodes.replace(
      0, node("gpu-1", 8, {{"kubeslurm.io/leaf", "s1"}, {"kubeslurm.io/spine", "p"}}));
  SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  EXPECT_EQ(index.snapshot.topologyLabels,
            (std::vector<std::string>{"kubeslurm.io/leaf", "kubeslurm.io/spine"}));

  objects.partitions[0].spec.topology =
      api::PartitionTopology{"", {"net.example.com/spine", "net.example.com/leaf"}};
  index = buildSnapshot(objects, {}, kNow);
  EXPECT_EQ(index.snapshot.topologyLabels,  // leaf first for the core
            (std::vector<std::string>{"net.example.com/leaf", "net.example.com/spine"}));

  objects.partitions[0].spec.topology = api::PartitionTopology{
      "SwitchName=s1 Nodes=gpu-[1-2]\nSwitchName=s2 Nodes=gpu-[3-4]\nSwitchName=top "
      "Switches=s[1-2]\n",
      {}};
  index = buildSnapshot(objects, {}, kNow);
  EXPECT_EQ(index.snapshot.topology.switches.size(), 3U);
  EXPECT_TRUE(index.snapshot.topologyLabels.empty());
}

// A node's labels reach the snapshot only as the tree's levels: partitions select on the whole
// set, features come from theirs, and a kubelet's other labels are not copied every cycle.
TEST(Snapshot, NodesKeepOnlyTheTreesLabels) {
  ClusterObjects objects = gpuCluster();
  objects.nodes.replace(0, node("gpu-1", 8,
                                {{"kubeslurm.io/leaf", "s1"},
                                 {"pool", "a"},
                                 {"kubernetes.io/hostname", "gpu-1"},
                                 {"kubeslurm.io/features", "ib"}}));
  objects.partitions[0] =
      partition("gpu", {{"nodeSelector", {{"matchLabels", {{"pool", "a"}}}}}, {"default", true}});
  const SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  ASSERT_EQ(index.nodeNames.front(), "gpu-1");
  const core::Node& first = index.snapshot.nodes.front();
  EXPECT_EQ(first.labels,
            (std::map<std::string, std::string, std::less<>>{{"kubeslurm.io/leaf", "s1"}}));
  EXPECT_EQ(first.features, std::vector<std::string>{"ib"});
  EXPECT_EQ(index.snapshot.partitions.front().nodes, std::vector<core::NodeIndex>{0});
  EXPECT_TRUE(index.snapshot.nodes[1].labels.empty());  // no leaf label: no level
}

// End to end: the informers' objects -> buildSnapshot -> core::plan(). The 2-node job starts on
// free nodes of its partition, never on the node an inference pod fills nor outside it.
// sbatch -p a,b: slurmctld queues the job once per partition and starts it in the first where
// it fits (job_scheduler.c build_job_queue, one record per part_ptr_list entry). The snapshot
// gives the core the first as Job::partition and the rest as otherPartitions; with `gpu` full,
// the plan starts the job in `spare`, and each partition's tolerations apply only there.
TEST(Snapshot, AJobOfSeveralPartitionsStartsInTheOneWhereItFits) {
  ClusterObjects objects;
  for (int i = 1; i <= 4; ++i) objects.nodes.push_back(node("gpu-" + std::to_string(i), 8));
  objects.nodes.mutableAt(2).taints.push_back(api::Taint{"dedicated", "spare", "NoSchedule", {}});
  objects.nodes.mutableAt(3).taints.push_back(api::Taint{"dedicated", "spare", "NoSchedule", {}});
  objects.partitions.push_back(partition("gpu", {{"nodes", "gpu-[1-2]"}, {"default", true}}));
  objects.partitions.push_back(partition(
      "spare", {{"nodes", "gpu-[3-4]"},
                {"defaultTime", "30:00"},
                {"tolerations", Json::array({{{"key", "dedicated"}, {"operator", "Exists"}}})}}));
  objects.pods.push_back(inferencePod("llm-7d9f-abcde", "gpu-1", 8));
  objects.jobs.push_back(
      slurmJob("train", 7, "PENDING", {{"partition", "gpu,spare,gpu"}, {"timeLimit", "1:00:00"}}));
  const SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  ASSERT_TRUE(index.problems.empty());
  const core::Job* job = jobOf(index, 7);
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->partition, "gpu");
  EXPECT_EQ(job->otherPartitions, std::vector<std::string>{"spare"});  // each name once
  EXPECT_TRUE(job->tolerations.empty());                               // spare's belong to spare
  ASSERT_NE(partitionOf(index, "spare"), nullptr);
  EXPECT_EQ(partitionOf(index, "spare")->tolerations.size(), 1U);

  const core::Plan plan = core::plan(index.snapshot, kNow, core::Budget{});
  ASSERT_EQ(plan.starts.size(), 1U);
  EXPECT_EQ(plan.starts[0].partition, "spare");
  std::set<std::string> nodes;
  for (core::NodeIndex i : plan.starts[0].nodes) nodes.insert(index.nodeNames[i]);
  EXPECT_EQ(nodes, (std::set<std::string>{"gpu-3", "gpu-4"}));

  // Without spare's tolerations its tainted nodes take no rank: the job waits.
  objects.partitions[1].spec.tolerations.clear();
  const SnapshotIndex untolerated = buildSnapshot(objects, {}, kNow);
  EXPECT_TRUE(core::plan(untolerated.snapshot, kNow, core::Budget{}).starts.empty());
}

// A job of several partitions that gave no --mem* takes each partition's memory default where it
// is tried: slurmctld's job_limits_check sets pn_min_memory from the DefMemPerCPU of the
// partition it tests (job_mgr.c), not only the first's. Here `big` would give it 1,200,000 MB a
// node, more than a node has; `lean` gives it 2,000 MB, and it starts there.
TEST(Snapshot, AJobOfSeveralPartitionsTakesEachPartitionsMemoryDefault) {
  ClusterObjects objects;
  for (int i = 1; i <= 4; ++i) objects.nodes.push_back(node("gpu-" + std::to_string(i), 8));
  objects.partitions.push_back(
      partition("big", {{"nodes", "gpu-[1-2]"}, {"default", true}, {"defMemPerCPU", 600000}}));
  objects.partitions.push_back(partition("lean", {{"nodes", "gpu-[3-4]"}, {"defMemPerCPU", 1000}}));
  objects.jobs.push_back(slurmJob("train", 7, "PENDING",
                                  {{"partition", "big,lean"}, {"nodes", 1}, {"cpusPerTask", 2}}));
  const SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  ASSERT_TRUE(index.problems.empty());
  const core::Job* job = jobOf(index, 7);
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->memoryBytesPerNode, 1200000ULL << 20);
  ASSERT_EQ(job->otherShapes.size(), 1U);
  EXPECT_EQ(job->otherShapes[0].partition, "lean");
  EXPECT_EQ(job->otherShapes[0].memoryBytesPerNode, 2000ULL << 20);
  EXPECT_EQ(job->otherShapes[0].cpuMillisPerNode, 2000U);

  const core::Plan plan = core::plan(index.snapshot, kNow, core::Budget{});
  ASSERT_EQ(plan.starts.size(), 1U);
  EXPECT_EQ(plan.starts[0].partition, "lean");

  // Both partitions' defaults alike: no shape of its own, and `big` takes it first.
  objects.partitions[0].spec.defMemPerCpu = 1000;
  const SnapshotIndex alike = buildSnapshot(objects, {}, kNow);
  const core::Job* planned = jobOf(alike, 7);
  ASSERT_NE(planned, nullptr);
  EXPECT_TRUE(planned->otherShapes.empty());
  const core::Plan first = core::plan(alike.snapshot, kNow, core::Budget{});
  ASSERT_EQ(first.starts.size(), 1U);
  EXPECT_EQ(first.starts[0].partition, "big");
}

// One unknown name refuses the whole list, naming it (partition_mgr.c get_part_list).
TEST(Snapshot, AnUnknownPartitionInAListIsAProblem) {
  ClusterObjects objects = gpuCluster();
  objects.jobs.push_back(slurmJob("typo", 70, "PENDING", {{"partition", "gpu,gpuu"}}));
  const SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  EXPECT_TRUE(index.snapshot.jobs.empty());
  ASSERT_EQ(index.problems.size(), 1U);
  EXPECT_EQ(index.problems[0].message, "Invalid partition name specified: gpuu");
}

// A running job of several partitions is counted in the one its pods were made for (their
// partition annotation), and keeps the time limit the first partition gave it (slurmctld sets
// a job's limit at submission).
TEST(Snapshot, ARunningJobOfSeveralPartitionsRunsInItsPodsPartition) {
  ClusterObjects objects = gpuCluster();
  objects.partitions[0].spec.defaultTime = api::SlurmDuration{"4:00:00", {4 * 3600}};
  objects.partitions.push_back(partition("spare", {{"nodes", "gpu-[3-4]"}}));
  objects.jobs.push_back(slurmJob("train", 8, "RUNNING", {{"partition", "gpu,spare"}},
                                  {{"startTime", api::formatTimestamp(kNow - 60)}}));
  for (int rank = 0; rank < 2; ++rank) {
    api::Pod pod = rankPod("train", rank, "gpu-" + std::to_string(rank + 3));
    pod.metadata.annotations["kubeslurm.io/partition"] = "spare";
    objects.pods.push_back(std::move(pod));
  }
  const SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  const core::Job* job = jobOf(index, 8);
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->phase, core::JobPhase::kRunning);
  EXPECT_EQ(job->partition, "spare");
  EXPECT_EQ(job->timeLimit, 4 * 3600);

  // Where the first has no DefaultTime, the limit is set at the start, from the partition it
  // started in (node_scheduler.c select_nodes): spare's MaxTime.
  objects.partitions[0].spec.defaultTime.reset();
  objects.partitions[1].spec.maxTime = api::SlurmDuration{"2:00:00", {2 * 3600}};
  const SnapshotIndex later = buildSnapshot(objects, {}, kNow);
  ASSERT_NE(jobOf(later, 8), nullptr);
  EXPECT_EQ(jobOf(later, 8)->timeLimit, 2 * 3600);
}

TEST(Snapshot, PlanStartsAGangAroundAnInferencePod) {
  ClusterObjects objects;
  for (int i = 1; i <= 3; ++i) objects.nodes.push_back(node("gpu-" + std::to_string(i), 8));
  objects.nodes.push_back(node("cpu-1", 8));
  objects.partitions.push_back(partition("gpu", {{"nodes", "gpu-[1-3]"}, {"default", true}}));
  objects.partitions.push_back(partition("cpu", {{"nodes", "cpu-1"}}));
  objects.pods.push_back(inferencePod("llm-7d9f-abcde", "gpu-1", 8));
  objects.jobs.push_back(slurmJob("train", 7, "PENDING", {{"timeLimit", "1:00:00"}}));
  const SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  ASSERT_TRUE(index.problems.empty());
  const core::Plan plan = core::plan(index.snapshot, kNow, core::Budget{});
  ASSERT_EQ(plan.starts.size(), 1U);
  EXPECT_EQ(plan.starts[0].jobId, 7U);
  std::set<std::string> nodes;
  for (core::NodeIndex i : plan.starts[0].nodes) nodes.insert(index.nodeNames[i]);
  EXPECT_EQ(nodes, (std::set<std::string>{"gpu-2", "gpu-3"}));

  // With the inference pod on gpu-2 too, only one node of the partition is free: the job waits
  // for Resources instead of spilling into another partition.
  objects.pods.push_back(inferencePod("llm-7d9f-fghij", "gpu-2", 1));
  const SnapshotIndex busy = buildSnapshot(objects, {}, kNow);
  const core::Plan waiting = core::plan(busy.snapshot, kNow, core::Budget{});
  EXPECT_TRUE(waiting.starts.empty());
  ASSERT_EQ(waiting.pending.size(), 1U);
  EXPECT_EQ(waiting.pending[0].reason, slurm::PendingReason::kResources);
}

// What the memo carries from one build to the next, written out: every field the translation of
// a node sets.
std::string translatedNodes(const SnapshotIndex& index) {
  std::ostringstream out;
  for (const core::Node& n : index.snapshot.nodes) {
    out << n.name << " gpus=" << n.allocatable.gpus << " cpu=" << n.allocatable.cpuMillis
        << " mem=" << n.allocatable.memoryBytes << " state=" << static_cast<int>(n.state)
        << " taints=" << n.taints.size() << " features=";
    for (const std::string& f : n.features) out << f << ',';
    out << '\n';
  }
  return out.str();
}

std::string names(const SnapshotIndex& index) {
  std::string out;
  for (const std::string& name : index.nodeNames) out += (out.empty() ? "" : ",") + name;
  return out;
}

ClusterObjects memoCluster() {
  ClusterObjects objects = gpuCluster();
  objects.nodes.replace(0, node("gpu-1", 8, {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}}));
  objects.nodes.mutableAt(2).unschedulable = true;
  objects.jobs.push_back(slurmJob("a", 5, "PENDING"));
  return objects;
}

TEST(SnapshotMemo, ABuildWithTheMemoGivesTheSnapshotOneWithoutGives) {
  const ClusterObjects objects = memoCluster();
  const std::string fresh = translatedNodes(buildSnapshot(objects, {}, kNow));
  ASSERT_NE(fresh.find("h100"), std::string::npos) << fresh;
  SnapshotMemo memo;
  EXPECT_EQ(translatedNodes(buildSnapshot(objects, {}, kNow, {}, &memo)), fresh);
  EXPECT_EQ(memo.lastHits(), 0U);
  EXPECT_EQ(memo.lastMisses(), 4U);
  const SnapshotIndex again = buildSnapshot(objects, {}, kNow, {}, &memo);
  EXPECT_EQ(translatedNodes(again), fresh);
  EXPECT_EQ(memo.lastHits(), 4U);
  EXPECT_EQ(memo.lastMisses(), 0U);
  EXPECT_EQ(again.snapshot.jobs.size(), 1U);
}

TEST(SnapshotMemo, ANodeTheInformerReplacedIsTranslatedAfresh) {
  ClusterObjects objects = memoCluster();
  SnapshotMemo memo;
  (void)buildSnapshot(objects, {}, kNow, {}, &memo);
  objects.nodes.replace(1, node("gpu-2", 4));
  const SnapshotIndex index = buildSnapshot(objects, {}, kNow, {}, &memo);
  EXPECT_EQ(translatedNodes(index), translatedNodes(buildSnapshot(objects, {}, kNow)));
  EXPECT_EQ(nodeOf(index, "gpu-2").allocatable.gpus, 4U);
  EXPECT_EQ(memo.lastHits(), 3U);
  EXPECT_EQ(memo.lastMisses(), 1U);
}

// The order a build sorted the nodes into serves the next build only for the same records in the
// same places: a list the informer reordered, or with one record replaced by a node of another
// name, is sorted again.
TEST(SnapshotMemo, ANodeListThatChangedIsSortedAgain) {
  ClusterObjects objects = memoCluster();
  SnapshotMemo memo;
  (void)buildSnapshot(objects, {}, kNow, {}, &memo);
  objects.nodes.replace(3, node("gpu-0", 8));
  EXPECT_EQ(names(buildSnapshot(objects, {}, kNow, {}, &memo)), "gpu-0,gpu-1,gpu-2,gpu-3");
  ClusterObjects reordered;
  for (std::size_t i = objects.nodes.size(); i-- > 0;) {
    reordered.nodes.push_back(std::const_pointer_cast<api::Node>(objects.nodes.shared(i)));
  }
  EXPECT_EQ(names(buildSnapshot(reordered, {}, kNow, {}, &memo)), "gpu-0,gpu-1,gpu-2,gpu-3");
  EXPECT_EQ(memo.lastHits(), 4U);
}

// The memo holds every record it translated, so a cycle that changes one (SharedList::mutableAt)
// changes a copy at another address: the change is never mistaken for the record translated.
TEST(SnapshotMemo, ANodeChangedInPlaceIsTranslatedAfresh) {
  ClusterObjects objects = memoCluster();
  SnapshotMemo memo;
  (void)buildSnapshot(objects, {}, kNow, {}, &memo);
  const api::Node* before = &objects.nodes[3];
  objects.nodes.mutableAt(3).unschedulable = true;
  EXPECT_NE(&objects.nodes[3], before);
  const SnapshotIndex index = buildSnapshot(objects, {}, kNow, {}, &memo);
  EXPECT_EQ(nodeOf(index, "gpu-4").state, core::NodeState::kDrain);
  EXPECT_EQ(memo.lastMisses(), 1U);
}

// A node a build no longer sees leaves the memo with that build: the memo holds no record longer
// than one build past the informer.
TEST(SnapshotMemo, ANodeThatWentAwayIsLetGo) {
  std::vector<std::shared_ptr<api::Node>> records;
  for (int i = 1; i <= 4; ++i) {
    records.push_back(std::make_shared<api::Node>(node("gpu-" + std::to_string(i), 8)));
  }
  ClusterObjects objects = gpuCluster();
  objects.nodes.clear();
  for (const auto& record : records) objects.nodes.push_back(record);
  SnapshotMemo memo;
  (void)buildSnapshot(objects, {}, kNow, {}, &memo);
  // This test, the list and the memo (its translation and the list it sorted).
  EXPECT_EQ(records[3].use_count(), 4);
  objects.nodes.clear();
  for (std::size_t i = 0; i < 3; ++i) objects.nodes.push_back(records[i]);
  const SnapshotIndex index = buildSnapshot(objects, {}, kNow, {}, &memo);
  EXPECT_EQ(index.snapshot.nodes.size(), 3U);
  EXPECT_EQ(memo.lastHits(), 3U);
  EXPECT_EQ(records[3].use_count(), 1);
  EXPECT_EQ(records[0].use_count(), 4);
}

// Lookups by id whatever order the keys were given in; the first of a repeated id is kept, as
// the snapshot keeps the first object that claims an id.
TEST(JobKeys, FindsByIdAndDropsWhatWasErased) {
  JobKeys keys = {{7, "ns/g"}, {3, "ns/c"}, {5, "ns/e"}, {3, "ns/c-again"}};
  EXPECT_EQ(keys.size(), 3U);
  EXPECT_EQ(keys.at(3), "ns/c");
  EXPECT_EQ(keys.find(4), keys.end());
  EXPECT_THROW((void)keys.at(4), std::out_of_range);
  keys.append(9, "ns/i");
  keys.erase({3, 9});
  EXPECT_FALSE(keys.contains(3));
  EXPECT_FALSE(keys.contains(9));
  EXPECT_EQ(keys.at(5), "ns/e");
  EXPECT_EQ(keys.at(7), "ns/g");
}

}  // namespace
}  // namespace kubeslurm::controllers
