// A Partition's status and the cluster metrics, read off the snapshot a cycle planned with
// (partition_status.h): sinfo's node states by the GPUs held on each node, GPUs by who holds
// them, and jobs by partition — a pending `sbatch -p a,b` job waits in both, as `squeue -p`
// lists it, a running one counts where it runs.
#include "controllers/partition_status.h"

#include <gtest/gtest.h>

namespace kubeslurm::controllers {
namespace {

core::Node node(std::string name, std::uint32_t gpus, std::uint32_t foreign = 0,
                core::NodeState state = core::NodeState::kUp) {
  core::Node n;
  n.name = std::move(name);
  n.allocatable.gpus = gpus;
  n.foreignUsed.gpus = foreign;
  n.state = state;
  return n;
}

core::Job running(core::JobId id, std::string partition, std::vector<core::NodeIndex> nodes,
                  std::uint32_t gpusPerNode) {
  core::Job job;
  job.id = id;
  job.partition = std::move(partition);
  job.phase = core::JobPhase::kRunning;
  job.allocatedNodes = std::move(nodes);
  job.gpusPerNode = gpusPerNode;
  return job;
}

core::Job pending(core::JobId id, std::string partition, std::vector<std::string> others = {}) {
  core::Job job;
  job.id = id;
  job.partition = std::move(partition);
  job.otherPartitions = std::move(others);
  return job;
}

api::Partition partition(std::string name) {
  api::Partition p;
  p.metadata.name = std::move(name);
  return p;
}

// Nodes 0-5 of 8 GPUs: idle; 3 GPUs of a job (mixed); a whole job node (allocated); 8 GPUs of
// inference (allocated); drained; down. Partition "train" has all six, "debug" nodes 0 and 1.
core::Snapshot cluster() {
  core::Snapshot s;
  s.nodes = {node("gpu-0", 8),
             node("gpu-1", 8),
             node("gpu-2", 8),
             node("gpu-3", 8, 8),
             node("gpu-4", 8, 0, core::NodeState::kDrain),
             node("gpu-5", 8, 0, core::NodeState::kNotReady)};
  s.partitions.resize(2);
  s.partitions[0].name = "train";
  s.partitions[0].nodes = {0, 1, 2, 3, 4, 5};
  s.partitions[1].name = "debug";
  s.partitions[1].nodes = {0, 1};
  s.jobs = {running(1, "train", {1}, 3), running(2, "train", {2}, 8), pending(3, "train"),
            pending(4, "debug", {"train"}), running(5, "debug", {}, 0)};
  return s;
}

TEST(PartitionStatusTest, NodesAreInSinfosStatesByTheGpusHeldOnThem) {
  const core::Snapshot s = cluster();
  const NodeLoad load = nodeLoad(s);
  EXPECT_EQ(load.jobGpus, (std::vector<std::uint32_t>{0, 3, 8, 0, 0, 0}));
  EXPECT_EQ(load.foreignGpus, (std::vector<std::uint32_t>{0, 0, 0, 8, 0, 0}));
  std::vector<std::string> states;
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    states.push_back(nodeStateName(s.nodes[i], load.jobGpus[i], load.foreignGpus[i]));
  }
  EXPECT_EQ(states,
            (std::vector<std::string>{"idle", "mixed", "allocated", "allocated", "drain", "down"}));
}

TEST(PartitionStatusTest, ForeignPodsHoldOnlyWhatTheJobsLeaveOfTheNode) {
  core::Snapshot s;
  s.nodes = {node("gpu-0", 8, 6)};
  s.jobs = {running(1, "train", {0}, 4)};
  const NodeLoad load = nodeLoad(s);
  EXPECT_EQ(load.jobGpus[0], 4U);
  EXPECT_EQ(load.foreignGpus[0], 4U) << "capped at the 4 GPUs the job leaves";
}

TEST(PartitionStatusTest, APartitionCountsItsNodesGpusAndJobs) {
  const core::Snapshot s = cluster();
  const PartitionFigures train = partitionFigures(partition("train"), s, nodeLoad(s));
  EXPECT_EQ(train.status.nodes, 6);
  EXPECT_EQ(train.status.idleNodes, 1);
  EXPECT_EQ(train.status.mixedNodes, 1);
  EXPECT_EQ(train.status.allocatedNodes, 2);
  EXPECT_EQ(train.status.drainedNodes, 1);
  EXPECT_EQ(train.status.downNodes, 1);
  EXPECT_EQ(train.status.gpus, 48);
  // A drained or down node's GPUs are neither allocated nor idle.
  EXPECT_EQ(train.status.allocatedGpus, 3 + 8 + 8);
  EXPECT_EQ(train.status.idleGpus, 8 + 5);
  EXPECT_EQ(train.load.gpusAllocated, 11);
  EXPECT_EQ(train.load.gpusForeign, 8);
  EXPECT_EQ(train.load.gpusFree, 13);
  EXPECT_EQ(train.load.gpusUnavailable, 16);
  // Jobs 1 and 2 run here; 3 waits here, and 4 (sbatch -p debug,train) waits here too.
  EXPECT_EQ(train.status.runningJobs, 2);
  EXPECT_EQ(train.status.pendingJobs, 2);
  EXPECT_EQ(train.load.runningJobs, 2);
  EXPECT_EQ(train.load.pendingJobs, 2);
}

TEST(PartitionStatusTest, ARunningJobCountsOnlyWhereItRuns) {
  core::Snapshot s = cluster();
  s.jobs = {running(1, "debug", {0}, 8)};
  s.jobs[0].otherPartitions = {"train"};  // asked for -p debug,train; started in debug
  const NodeLoad load = nodeLoad(s);
  EXPECT_EQ(partitionFigures(partition("debug"), s, load).status.runningJobs, 1);
  EXPECT_EQ(partitionFigures(partition("train"), s, load).status.runningJobs, 0);
  // Its node is in both partitions: allocated in each (train's other one is inference's gpu-3).
  EXPECT_EQ(partitionFigures(partition("debug"), s, load).status.allocatedNodes, 1);
  EXPECT_EQ(partitionFigures(partition("train"), s, load).status.allocatedNodes, 2);
}

TEST(PartitionStatusTest, APartitionTheSnapshotDoesNotKnowHasNoFiguresAndKeepsItsConditions) {
  const core::Snapshot s = cluster();
  api::Partition gone = partition("inference");
  gone.status.nodes = 4;
  gone.status.conditions.resize(1);
  gone.status.conditions[0].type = "Valid";
  const PartitionFigures figures = partitionFigures(gone, s, nodeLoad(s));
  EXPECT_EQ(figures.status.nodes, 0);
  ASSERT_EQ(figures.status.conditions.size(), 1U);
  EXPECT_EQ(figures.status.conditions[0].type, "Valid");
  EXPECT_FALSE(sameFigures(figures.status, gone.status));
}

TEST(PartitionStatusTest, TheStatusIsSameWhenOnlyItsConditionsDiffer) {
  const core::Snapshot s = cluster();
  const PartitionFigures figures = partitionFigures(partition("debug"), s, nodeLoad(s));
  api::PartitionStatus written = figures.status;
  written.conditions.resize(1);
  EXPECT_TRUE(sameFigures(figures.status, written));
  written.pendingJobs += 1;
  EXPECT_FALSE(sameFigures(figures.status, written));
}

// A partition's settings that do not hold (a Nodes= that does not parse, two memory defaults)
// reach the admin as its Valid condition; the time of a transition stays until the status moves.
TEST(PartitionStatusTest, AProblemIsTheValidConditionUntilItIsMended) {
  std::vector<api::Condition> conditions;
  EXPECT_TRUE(setValidCondition(conditions, "", "", 100));
  ASSERT_EQ(conditions.size(), 1U);
  EXPECT_EQ(conditions[0].type, "Valid");
  EXPECT_EQ(conditions[0].status, "True");
  EXPECT_FALSE(conditions[0].message.empty());  // v1.20 refuses an empty one
  EXPECT_FALSE(setValidCondition(conditions, "", "", 200));
  EXPECT_EQ(conditions[0].lastTransitionTime, 100);

  EXPECT_TRUE(setValidCondition(conditions, "InvalidMemory", "DefMemPerCPU ignored", 300));
  EXPECT_EQ(conditions[0].status, "False");
  EXPECT_EQ(conditions[0].reason, "InvalidMemory");
  EXPECT_EQ(conditions[0].lastTransitionTime, 300);
  // Another problem, still False: the message moves, the transition time does not.
  EXPECT_TRUE(setValidCondition(conditions, "InvalidNodes", "spec.nodes: bad", 400));
  EXPECT_EQ(conditions[0].reason, "InvalidNodes");
  EXPECT_EQ(conditions[0].lastTransitionTime, 300);
  EXPECT_TRUE(setValidCondition(conditions, "", "", 500));
  EXPECT_EQ(conditions[0].status, "True");
  EXPECT_EQ(conditions[0].lastTransitionTime, 500);
  EXPECT_EQ(conditions.size(), 1U);
}

}  // namespace
}  // namespace kubeslurm::controllers
