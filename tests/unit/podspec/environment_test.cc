#include "kubeslurm/podspec/environment.h"

#include <map>
#include <string>

#include <gtest/gtest.h>

namespace kubeslurm::podspec {
namespace {

std::map<std::string, std::string> asMap(const EnvironmentList& env) {
  std::map<std::string, std::string> map;
  for (const auto& [name, value] : env) {
    EXPECT_TRUE(map.emplace(name, value).second) << "set twice: " << name;
  }
  return map;
}

// The reference cluster's job 2: `sbatch -N4 --gres=gpu:8 -p train -J x` from /home/alice/jobs
// (shared/reference/slurm-22.05.md, "Batch step environment"), with kubeslurm's rank
// hostnames standing in for gpu-node-00[1-4].
JobEnvironmentInput referenceJob() {
  JobEnvironmentInput input;
  input.jobId = 2;
  input.jobName = "x";
  input.user = "root";
  input.partition = "train";
  input.account = "root";
  input.qos = "normal";
  input.clusterName = "refcluster";
  input.submitDir = "/home/alice/jobs";
  input.submitHost = "vm";
  input.rankHostnames = {"gpu-node-001", "gpu-node-002", "gpu-node-003", "gpu-node-004"};
  input.gpusPerNode = 8;
  input.cpusPerNode = 1;
  input.topologyAddresses = {"spine.leaf1.gpu-node-001", "spine.leaf1.gpu-node-002",
                             "spine.leaf1.gpu-node-003", "spine.leaf1.gpu-node-004"};
  input.topologyPattern = "switch.switch.node";
  return input;
}

TEST(RankEnvironment, RankZeroMatchesTheReferenceBatchStep) {
  auto env = rankEnvironment(referenceJob(), 0);
  ASSERT_TRUE(env.isOk()) << env.status().toString();
  const auto map = asMap(*env);
  // Every value below is the reference's, verbatim.
  const std::map<std::string, std::string> reference = {
      {"CUDA_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7"},
      {"GPU_DEVICE_ORDINAL", "0,1,2,3,4,5,6,7"},
      {"ROCR_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7"},
      {"SLURMD_NODENAME", "gpu-node-001"},
      {"SLURM_CLUSTER_NAME", "refcluster"},
      {"SLURM_CPUS_ON_NODE", "1"},
      {"SLURM_GPUS_ON_NODE", "8"},
      {"SLURM_GTIDS", "0"},
      {"SLURM_JOBID", "2"},
      {"SLURM_JOB_ACCOUNT", "root"},
      {"SLURM_JOB_CPUS_PER_NODE", "1(x4)"},
      {"SLURM_JOB_GPUS", "0,1,2,3,4,5,6,7"},
      {"SLURM_JOB_ID", "2"},
      {"SLURM_JOB_NAME", "x"},
      {"SLURM_JOB_NODELIST", "gpu-node-[001-004]"},
      {"SLURM_JOB_NUM_NODES", "4"},
      {"SLURM_JOB_PARTITION", "train"},
      {"SLURM_JOB_QOS", "normal"},
      {"SLURM_JOB_USER", "root"},
      {"SLURM_LOCALID", "0"},
      {"SLURM_NNODES", "4"},
      {"SLURM_NODEID", "0"},
      {"SLURM_NODELIST", "gpu-node-[001-004]"},
      {"SLURM_NPROCS", "4"},
      {"SLURM_NTASKS", "4"},
      {"SLURM_NTASKS_PER_NODE", "1"},
      {"SLURM_PROCID", "0"},
      {"SLURM_SUBMIT_DIR", "/home/alice/jobs"},
      {"SLURM_SUBMIT_HOST", "vm"},
      {"SLURM_TASKS_PER_NODE", "1(x4)"},
      {"SLURM_TOPOLOGY_ADDR", "spine.leaf1.gpu-node-001"},
      {"SLURM_TOPOLOGY_ADDR_PATTERN", "switch.switch.node"},
  };
  for (const auto& [name, value] : reference) {
    auto found = map.find(name);
    ASSERT_NE(found, map.end()) << name;
    EXPECT_EQ(found->second, value) << name;
  }
  // --gres sets no SLURM_GPUS_PER_NODE (reference: only --gpus-per-node does).
  EXPECT_EQ(map.count("SLURM_GPUS_PER_NODE"), 0U);
  EXPECT_EQ(map.count("SLURM_CPUS_PER_TASK"), 0U);
  EXPECT_EQ(map.count("SLURM_ARRAY_JOB_ID"), 0U);
}

TEST(RankEnvironment, LaterRanksSeeTheirOwnNodeAndTasks) {
  JobEnvironmentInput input = referenceJob();
  input.tasksPerNode = 2;
  auto env = rankEnvironment(input, 2);
  ASSERT_TRUE(env.isOk());
  const auto map = asMap(*env);
  EXPECT_EQ(map.at("SLURMD_NODENAME"), "gpu-node-003");
  EXPECT_EQ(map.at("SLURM_NODEID"), "2");
  EXPECT_EQ(map.at("SLURM_PROCID"), "4");
  EXPECT_EQ(map.at("SLURM_GTIDS"), "4,5");
  EXPECT_EQ(map.at("SLURM_NTASKS"), "8");
  EXPECT_EQ(map.at("SLURM_TASKS_PER_NODE"), "2(x4)");
  EXPECT_EQ(map.at("SLURM_TOPOLOGY_ADDR"), "spine.leaf1.gpu-node-003");
  EXPECT_EQ(map.at("NODE_RANK"), "2");
  EXPECT_EQ(map.at("PET_NODE_RANK"), "2");
}

TEST(RankEnvironment, TorchrunRendezvousPointsAtRankZero) {
  JobEnvironmentInput input = referenceJob();
  input.rankHostnames = {"train-abc12-0", "train-abc12-1"};
  input.topologyAddresses.clear();
  input.serviceDomain = "train-abc12.team-a.svc.cluster.local";
  input.nprocPerNode = 8;
  input.masterPort = 29400;
  auto env = rankEnvironment(input, 1);
  ASSERT_TRUE(env.isOk());
  const auto map = asMap(*env);
  EXPECT_EQ(map.at("MASTER_ADDR"), "train-abc12-0.train-abc12.team-a.svc.cluster.local");
  EXPECT_EQ(map.at("PET_MASTER_ADDR"), map.at("MASTER_ADDR"));
  EXPECT_EQ(map.at("MASTER_PORT"), "29400");
  EXPECT_EQ(map.at("PET_MASTER_PORT"), "29400");
  EXPECT_EQ(map.at("NNODES"), "2");
  EXPECT_EQ(map.at("PET_NNODES"), "2");
  EXPECT_EQ(map.at("NPROC_PER_NODE"), "8");
  EXPECT_EQ(map.at("PET_NPROC_PER_NODE"), "8");
  EXPECT_EQ(map.at("WORLD_SIZE"), "16");
  // Eight processes per pod: no single process rank to give.
  EXPECT_EQ(map.count("RANK"), 0U);
  // Without topology Slurm sets the node name and the pattern "node".
  EXPECT_EQ(map.at("SLURM_TOPOLOGY_ADDR"), "train-abc12-1");
  EXPECT_EQ(map.at("SLURM_TOPOLOGY_ADDR_PATTERN"), "switch.switch.node");
  EXPECT_EQ(map.at("SLURM_JOB_NODELIST"), "train-abc12-[0-1]");
}

TEST(RankEnvironment, OneProcessPerNodeGetsItsRank) {
  JobEnvironmentInput input = referenceJob();
  auto env = rankEnvironment(input, 3);
  ASSERT_TRUE(env.isOk());
  const auto map = asMap(*env);
  EXPECT_EQ(map.at("RANK"), "3");
  EXPECT_EQ(map.at("WORLD_SIZE"), "4");
  EXPECT_EQ(map.at("MASTER_ADDR"), "gpu-node-001");
  EXPECT_EQ(map.at("MASTER_PORT"), "29500");
}

// Reference: array task env `SLURM_ARRAY_JOB_ID=6 SLURM_ARRAY_TASK_COUNT=8
// SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_MAX=7 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_STEP=1
// SLURM_JOB_ID=7`; --gpus-per-node=4 gives SLURM_GPUS_PER_NODE=4; -c gives SLURM_CPUS_PER_TASK.
TEST(RankEnvironment, ArrayTasksAndOptionalVariables) {
  JobEnvironmentInput input = referenceJob();
  input.jobId = 7;
  input.array = ArrayTaskInfo{6, 0, 8, 0, 7, 1};
  input.gpusPerNode = 4;
  input.gpusPerNodeOption = 4;
  input.cpusPerTaskOption = 6;
  auto env = rankEnvironment(input, 0);
  ASSERT_TRUE(env.isOk());
  const auto map = asMap(*env);
  EXPECT_EQ(map.at("SLURM_ARRAY_JOB_ID"), "6");
  EXPECT_EQ(map.at("SLURM_ARRAY_TASK_COUNT"), "8");
  EXPECT_EQ(map.at("SLURM_ARRAY_TASK_ID"), "0");
  EXPECT_EQ(map.at("SLURM_ARRAY_TASK_MAX"), "7");
  EXPECT_EQ(map.at("SLURM_ARRAY_TASK_MIN"), "0");
  EXPECT_EQ(map.at("SLURM_ARRAY_TASK_STEP"), "1");
  EXPECT_EQ(map.at("SLURM_JOB_ID"), "7");
  EXPECT_EQ(map.at("SLURM_GPUS_PER_NODE"), "4");
  EXPECT_EQ(map.at("CUDA_VISIBLE_DEVICES"), "0,1,2,3");
  EXPECT_EQ(map.at("SLURM_CPUS_PER_TASK"), "6");
}

TEST(RankEnvironment, NoGpusNoGpuVariables) {
  JobEnvironmentInput input = referenceJob();
  input.gpusPerNode = 0;
  auto env = rankEnvironment(input, 0);
  ASSERT_TRUE(env.isOk());
  const auto map = asMap(*env);
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "ROCR_VISIBLE_DEVICES",
                           "SLURM_GPUS_ON_NODE", "SLURM_JOB_GPUS"}) {
    EXPECT_EQ(map.count(name), 0U) << name;
  }
}

TEST(RankEnvironment, PartitionNcclSettingsAreAddedButCannotOverride) {
  JobEnvironmentInput input = referenceJob();
  input.ncclSettings = {{"NCCL_SOCKET_IFNAME", "eth0"}, {"NCCL_IB_HCA", "mlx5"}};
  auto env = rankEnvironment(input, 0);
  ASSERT_TRUE(env.isOk());
  const auto map = asMap(*env);
  EXPECT_EQ(map.at("NCCL_SOCKET_IFNAME"), "eth0");
  EXPECT_EQ(map.at("NCCL_IB_HCA"), "mlx5");

  input.ncclSettings = {{"MASTER_ADDR", "elsewhere"}};
  auto overriding = rankEnvironment(input, 0);
  ASSERT_FALSE(overriding.isOk());
  EXPECT_NE(overriding.status().message().find("MASTER_ADDR"), std::string::npos);
}

TEST(RankEnvironment, IsSortedAndDeterministic) {
  auto first = rankEnvironment(referenceJob(), 1);
  auto second = rankEnvironment(referenceJob(), 1);
  ASSERT_TRUE(first.isOk() && second.isOk());
  EXPECT_EQ(*first, *second);
  EXPECT_TRUE(std::is_sorted(first->begin(), first->end()));
}

TEST(RankEnvironment, RejectsInconsistentInput) {
  JobEnvironmentInput input = referenceJob();
  EXPECT_FALSE(rankEnvironment(input, 4).isOk());
  input.topologyAddresses.pop_back();
  EXPECT_FALSE(rankEnvironment(input, 0).isOk());
  input = referenceJob();
  input.rankHostnames.clear();
  input.topologyAddresses.clear();
  EXPECT_FALSE(rankEnvironment(input, 0).isOk());
}

}  // namespace
}  // namespace kubeslurm::podspec
