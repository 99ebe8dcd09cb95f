// The environment of a rank pod: what slurmd gives a batch step (SLURM_*), what torchrun reads
// (MASTER_ADDR, WORLD_SIZE, ... and the PET_* spellings its launcher accepts) and the NCCL
// settings of the partition. Names and value formats follow Slurm 22.05 as captured on the
// reference cluster (shared/reference/slurm-22.05.md, "Batch step environment"). PURE.
//
// What a rank is. Slurm runs the batch script on the first node of the allocation and one task
// per node of each step; kubeslurm runs one rank pod per allocated node, `<job>-<rank>`, whose
// hostname is the node name the job sees: SLURM_JOB_NODELIST is the hostlist of those
// hostnames, SLURMD_NODENAME the pod's own, and `scontrol show hostnames` inside the pod expands
// to names every rank resolves through the job's headless Service.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kubeslurm/base/status.h"

namespace kubeslurm::podspec {

inline constexpr std::uint16_t kDefaultMasterPort = 29500;  // torchrun's default

struct ArrayTaskInfo {
  std::int64_t arrayJobId = 0;  // SLURM_ARRAY_JOB_ID: the id of the whole array
  std::uint32_t taskId = 0;
  std::uint32_t taskCount = 0;
  std::uint32_t taskMin = 0;
  std::uint32_t taskMax = 0;
  std::uint32_t taskStep = 1;
};

// Everything the environment depends on, as the operator knows it once the gang is placed.
struct JobEnvironmentInput {
  std::int64_t jobId = 0;
  std::string jobName;      // spec.jobName (Slurm's free-text name)
  std::string user;         // SLURM_JOB_USER
  std::string partition;    // defaulted
  std::string account;      // defaulted
  std::string qos;          // "normal" when none was given, as slurmctld reports it
  std::string clusterName;  // SLURM_CLUSTER_NAME
  std::string submitDir;    // SLURM_SUBMIT_DIR (the job's working directory)
  std::string submitHost;   // SLURM_SUBMIT_HOST; omitted when empty
  // One hostname per rank, in rank order (the core's topology order): `<job>-<rank>`.
  std::vector<std::string> rankHostnames;
  // The job's DNS domain for its headless Service: `<service>.<namespace>.svc.<cluster domain>`.
  // MASTER_ADDR is rank 0's hostname qualified by it, so it resolves even without the search
  // path (torchrun's c10d store connects before the DNS search list matters to anyone).
  std::string serviceDomain;
  std::uint32_t tasksPerNode = 1;
  // -c as given: Slurm sets SLURM_CPUS_PER_TASK only when the option was.
  std::optional<std::uint32_t> cpusPerTaskOption;
  std::uint32_t cpusPerNode = 1;  // SLURM_CPUS_ON_NODE / SLURM_JOB_CPUS_PER_NODE
  std::uint32_t gpusPerNode = 0;
  // --gpus-per-node as given: Slurm sets SLURM_GPUS_PER_NODE only for that option (not --gres).
  std::optional<std::uint32_t> gpusPerNodeOption;
  std::optional<ArrayTaskInfo> array;
  // SLURM_TOPOLOGY_ADDR per rank ("spine.leaf1.<hostname>") and the common pattern; empty:
  // no topology (Slurm then sets the hostname and "node").
  std::vector<std::string> topologyAddresses;
  std::string topologyPattern = "node";
  std::uint16_t masterPort = kDefaultMasterPort;
  // NPROC_PER_NODE: spec.rendezvous.nprocPerNode resolved ("gpu" → GPUs per node); 0 = tasks
  // per node.
  std::uint32_t nprocPerNode = 0;
  std::map<std::string, std::string> ncclSettings;  // the partition's spec.nccl, verbatim
};

using EnvironmentList = std::vector<std::pair<std::string, std::string>>;

// The variables of rank `rank`, sorted by name (a stable pod spec: the same inputs always give
// the same object, so reconciles compare equal). kInvalidArgument when the input is
// inconsistent (no ranks, rank out of range, addresses not one per rank, an NCCL setting that is
// not an NCCL_ variable or would override one we set).
StatusOr<EnvironmentList> rankEnvironment(const JobEnvironmentInput& input, std::uint32_t rank);

}  // namespace kubeslurm::podspec
