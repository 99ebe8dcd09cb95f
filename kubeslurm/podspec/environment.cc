#include "kubeslurm/podspec/environment.h"

#include <algorithm>
#include <string_view>

#include "kubeslurm/slurm/hostlist.h"
#include "kubeslurm/slurm/repeated_counts.h"
#include "kubeslurm/step/step_layout.h"

namespace kubeslurm::podspec {

namespace {

// Names the operator sets itself: a partition's NCCL settings may not override them.
bool isReserved(std::string_view name) {
  return name.starts_with("SLURM") || name.starts_with("PET_") || name == "MASTER_ADDR" ||
         name == "MASTER_PORT" || name == "WORLD_SIZE" || name == "NODE_RANK" || name == "NNODES" ||
         name == "NPROC_PER_NODE" || name == "RANK" || name == "CUDA_VISIBLE_DEVICES";
}

}  // namespace

StatusOr<EnvironmentList> rankEnvironment(const JobEnvironmentInput& input, std::uint32_t rank) {
  const auto nodes = static_cast<std::uint32_t>(input.rankHostnames.size());
  if (nodes == 0) return invalidArgument("a job environment needs at least one rank");
  if (rank >= nodes) {
    return invalidArgument("rank " + std::to_string(rank) + " is outside the job's " +
                           std::to_string(nodes) + " ranks");
  }
  if (!input.topologyAddresses.empty() && input.topologyAddresses.size() != nodes) {
    return invalidArgument("topology addresses must be given for every rank or none");
  }
  if (input.tasksPerNode == 0) return invalidArgument("tasks per node must be at least 1");

  EnvironmentList env;
  const auto set = [&env](std::string name, std::string value) {
    env.emplace_back(std::move(name), std::move(value));
  };
  const std::string& hostname = input.rankHostnames[rank];
  const std::string nodeList = slurm::compressHostlistSorted(input.rankHostnames);
  const std::uint32_t ntasks = nodes * input.tasksPerNode;
  const std::vector<std::uint32_t> tasksPerNode(nodes, input.tasksPerNode);
  const std::vector<std::uint32_t> cpusPerNode(nodes, input.cpusPerNode);
  const std::string jobId = std::to_string(input.jobId);

  // Slurm's batch step.
  set("SLURMD_NODENAME", hostname);
  if (!input.clusterName.empty()) set("SLURM_CLUSTER_NAME", input.clusterName);
  set("SLURM_CPUS_ON_NODE", std::to_string(input.cpusPerNode));
  if (input.cpusPerTaskOption) set("SLURM_CPUS_PER_TASK", std::to_string(*input.cpusPerTaskOption));
  std::string gtids;
  for (std::uint32_t task = 0; task < input.tasksPerNode; ++task) {
    if (task > 0) gtids += ',';
    gtids += std::to_string(rank * input.tasksPerNode + task);
  }
  set("SLURM_GTIDS", gtids);
  set("SLURM_JOBID", jobId);
  set("SLURM_JOB_ID", jobId);
  if (!input.account.empty()) set("SLURM_JOB_ACCOUNT", input.account);
  set("SLURM_JOB_CPUS_PER_NODE", slurm::formatRepeatedCounts(cpusPerNode));
  set("SLURM_JOB_NAME", input.jobName);
  set("SLURM_JOB_NODELIST", nodeList);
  set("SLURM_JOB_NUM_NODES", std::to_string(nodes));
  set("SLURM_JOB_PARTITION", input.partition);
  if (!input.qos.empty()) set("SLURM_JOB_QOS", input.qos);
  if (!input.user.empty()) set("SLURM_JOB_USER", input.user);
  set("SLURM_LOCALID", "0");
  set("SLURM_NNODES", std::to_string(nodes));
  set("SLURM_NODEID", std::to_string(rank));
  set("SLURM_NODELIST", nodeList);
  set("SLURM_NPROCS", std::to_string(ntasks));
  set("SLURM_NTASKS", std::to_string(ntasks));
  set("SLURM_NTASKS_PER_NODE", std::to_string(input.tasksPerNode));
  set("SLURM_PROCID", std::to_string(rank * input.tasksPerNode));
  if (!input.submitDir.empty()) set("SLURM_SUBMIT_DIR", input.submitDir);
  if (!input.submitHost.empty()) set("SLURM_SUBMIT_HOST", input.submitHost);
  set("SLURM_TASKS_PER_NODE", slurm::formatRepeatedCounts(tasksPerNode));
  set("SLURM_TOPOLOGY_ADDR",
      input.topologyAddresses.empty() ? hostname : input.topologyAddresses[rank]);
  set("SLURM_TOPOLOGY_ADDR_PATTERN", input.topologyPattern);
  if (input.gpusPerNode > 0) {
    const std::string ordinals = step::gpuOrdinals(input.gpusPerNode);
    set("CUDA_VISIBLE_DEVICES", ordinals);
    set("GPU_DEVICE_ORDINAL", ordinals);
    set("ROCR_VISIBLE_DEVICES", ordinals);
    set("SLURM_GPUS_ON_NODE", std::to_string(input.gpusPerNode));
    set("SLURM_JOB_GPUS", ordinals);
  }
  if (input.gpusPerNodeOption) set("SLURM_GPUS_PER_NODE", std::to_string(*input.gpusPerNodeOption));
  if (input.array) {
    const ArrayTaskInfo& array = *input.array;
    set("SLURM_ARRAY_JOB_ID", std::to_string(array.arrayJobId));
    set("SLURM_ARRAY_TASK_COUNT", std::to_string(array.taskCount));
    set("SLURM_ARRAY_TASK_ID", std::to_string(array.taskId));
    set("SLURM_ARRAY_TASK_MAX", std::to_string(array.taskMax));
    set("SLURM_ARRAY_TASK_MIN", std::to_string(array.taskMin));
    set("SLURM_ARRAY_TASK_STEP", std::to_string(array.taskStep));
  }

  // torchrun. Its launcher reads PET_<OPTION> for each command-line option, so a bare
  // `torchrun train.py` in every rank joins the same static rendezvous; the unprefixed names
  // are what Kubeflow's PyTorchJob sets and what scripts pass on explicitly.
  const std::uint32_t nproc = input.nprocPerNode == 0 ? input.tasksPerNode : input.nprocPerNode;
  std::string masterAddr = input.rankHostnames.front();
  if (!input.serviceDomain.empty()) masterAddr += "." + input.serviceDomain;
  set("MASTER_ADDR", masterAddr);
  set("MASTER_PORT", std::to_string(input.masterPort));
  set("NNODES", std::to_string(nodes));
  set("NODE_RANK", std::to_string(rank));
  set("NPROC_PER_NODE", std::to_string(nproc));
  set("WORLD_SIZE", std::to_string(nodes * nproc));
  // RANK is a process's rank: it names this pod's only process when there is one per node
  // (torch.distributed's env:// init without torchrun); torchrun sets it per worker otherwise.
  if (nproc == 1) set("RANK", std::to_string(rank));
  set("PET_MASTER_ADDR", masterAddr);
  set("PET_MASTER_PORT", std::to_string(input.masterPort));
  set("PET_NNODES", std::to_string(nodes));
  set("PET_NODE_RANK", std::to_string(rank));
  set("PET_NPROC_PER_NODE", std::to_string(nproc));

  for (const auto& [name, value] : input.ncclSettings) {
    if (!name.starts_with("NCCL_") || isReserved(name)) {
      return invalidArgument("partition NCCL setting " + name +
                             " is not an NCCL_ variable the operator leaves to partitions");
    }
    set(name, value);
  }
  std::sort(env.begin(), env.end());
  return env;
}

}  // namespace kubeslurm::podspec
