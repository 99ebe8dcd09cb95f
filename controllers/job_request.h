// A SlurmJob's request as the scheduling core sees it: whole-node figures per rank, the time
// limit defaulted from the partition, hostlists expanded (within the cluster's size). PURE.
//
// Per-node GPUs follow sbatch's options (Slurm 22.05 semantics, one rank per node):
//   --gres=gpu[:type]:N     N per node (the sum of the gpu entries)
//   --gpus-per-node=N       N per node
//   --gpus-per-task=N       N x tasks per node
//   --gpus=N                N for the whole job, spread evenly: ceil(N / nodes) per node
// Giving more than one of these with different results is refused, as slurmctld refuses
// conflicting TRES requests ("Invalid generic resource (gres) specification").
// CPUs: cpus-per-task (default 1) x tasks per node. Memory: --mem per node, else --mem-per-cpu x
// CPUs, else --mem-per-gpu x GPUs, else the partition's DefMemPerGPU x GPUs (GPU jobs),
// DefMemPerNode or DefMemPerCPU x CPUs. A job left with none (--mem=0, or no default) gets all
// of each node's memory, as slurmctld allocates it: no other job's rank can share its nodes
// (core::Job::allNodeMemory; docs/cli.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/base/status.h"
#include "kubeslurm/core/model.h"
#include "kubeslurm/podspec/container_mounts.h"
#include "kubeslurm/slurm/sbatch_options.h"

namespace kubeslurm::controllers {

struct NodeRequest {
  std::uint32_t minNodes = 1;
  std::uint32_t maxNodes = 1;
  std::uint32_t tasksPerNode = 1;
  std::uint32_t gpusPerNode = 0;
  std::uint64_t cpuMillisPerNode = 0;
  std::uint64_t memoryBytesPerNode = 0;
  bool wholeNode = false;  // --exclusive (--exclusive=user and =mcs alike)
  bool allMemory = false;  // all of each node's memory: no other job's rank can share its nodes
};

// GPU types. --gres=gpu:h100:8 (or --gpus=h100:8, --gpus-per-node=h100:8 ...) runs only on nodes
// whose GPUs are of that type, as Slurm matches a job's GRES type with the node's Gres=gpu:TYPE
// (without regard to case). A node's types are those its kubeslurm.io/gpu-type label lists
// (comma-separated, set by the admin as gres.conf's Type=), else the words of its
// nvidia.com/gpu.product label as GPU feature discovery sets it ("NVIDIA-H100-80GB-HBM3": nvidia,
// h100, 80gb, hbm3). In the core both are features, "gpu-type:h100", and the job's types are
// constraints on them beside its -C ones: a job no node can hold waits with BadConstraints, and
// --test-only answers "Requested node configuration is not available".
inline constexpr std::string_view kGpuTypeLabel = "kubeslurm.io/gpu-type";
inline constexpr std::string_view kGpuTypeFeature = "gpu-type:";

// The features that say a node's GPU types, from its kubeslurm.io/gpu-type and
// nvidia.com/gpu.product labels ("" when absent).
std::vector<std::string> gpuTypeFeatures(std::string_view typeLabel, std::string_view product);

// The features a job's GPU types require, each once, in the order first named.
std::vector<std::string> requiredGpuTypeFeatures(const slurm::JobRequest& request);

// The GPUs a list of GRES entries asks for ("gpu:2,gpu:a100:2" -> 4; other GRES ignored).
std::uint64_t gpuCount(const std::vector<slurm::GresRequest>& entries);

// The request per node in `partition`, whose memory defaults and MaxMemPerCPU apply.
// kInvalidArgument with the message sbatch/slurmctld would give for inconsistent requests.
StatusOr<NodeRequest> nodeRequest(const slurm::JobRequest& request,
                                  const api::PartitionSpec& partition);

// The taints a partition's pods tolerate, as core::Partition::tolerations.
std::vector<core::Taint> partitionTolerations(const api::Partition& partition);

// The core's Job for a pending request. `partition` is the job's (already defaulted) partition;
// the time limit defaults to its DefaultTime, then MaxTime (as slurmctld applies them).
// The job's Pyxis --container-mounts resolved against its partition's allowed paths
// (podspec::resolveContainerMounts): planning refuses the job on an error, admission mounts them.
StatusOr<std::vector<podspec::ContainerMount>> containerMounts(const slurm::JobRequest& request,
                                                               const api::Partition& partition);

// slurmctld's refusal of a node name the cluster does not have (ESLURM_INVALID_NODE_NAME).
inline constexpr std::string_view kInvalidNodeName = "Invalid node name specified";
// slurmctld's refusal of a --constraint it cannot read, or that names a feature no node has
// (ESLURM_INVALID_FEATURE).
inline constexpr std::string_view kInvalidFeature = "Invalid feature specification";

// A --constraint as slurmctld's build_feature_list reads it (job_scheduler.c): ',' is '&' ("a
// common error"), and '|', '[...]', '(...)' and '*N' make OR, matching-OR and counted terms.
struct ConstraintTerms {
  std::vector<std::string> features;  // every feature it names, in order
  bool wellFormed = true;             // as build_feature_list parses it
  // The expression as the core plans it, in conjunctive form: every node of the job has one
  // feature of each clause ("a&b": {a},{b}; "a|b": {a,b}; "(a|b)&c": {a,b},{c}), besides the
  // matching OR below. None for the forms the core does not plan: counts ("a*2"), a bracket
  // that is more than "[a|b|...]" joined by '&', and '&' and '|' mixed outside parentheses
  // (which Slurm reads left to right).
  std::optional<std::vector<std::vector<std::string>>> clauses;
  // "[a|b]" (matching OR): every node of the job has the same one of these, in this order.
  std::vector<std::string> matching;
};
ConstraintTerms constraintTerms(std::string_view constraint);
// What a job whose --constraint is in a form the core does not plan is told.
inline constexpr std::string_view kUnplannedConstraint =
    "kubeslurm does not plan a*N, [...] beyond [a|b] joined by &, or & and | mixed outside "
    "parentheses";
// A matching OR names at most this many features (node_scheduler.c MAX_FEATURES: the features
// of "[fs1|fs2|...]" are bits of a 64-bit set).
inline constexpr std::size_t kMaxMatchingFeatures = 64;

// `clusterNodes`: how many nodes the cluster has. A --nodelist or --exclude of more hosts than
// that names a node that does not exist: kInvalidArgument, kInvalidNodeName, found without
// expanding the list (a hostlist of a few bytes can name millions of hosts).
StatusOr<core::Job> coreJob(const slurm::JobRequest& request, const api::Partition& partition,
                            core::JobId id, const std::string& user, core::Time submitTime,
                            std::size_t clusterNodes);

// The core's Job for a pending request that may run in `partitions` (jobPartitions, not empty):
// coreJob's with the first, the rest as Job::otherPartitions (sbatch -p a,b), each with the
// memory its own defaults give where they differ (Job::otherShapes). The one translation of a
// SlurmJob's request that the cycle and --test-only share.
StatusOr<core::Job> plannedJob(const slurm::JobRequest& request,
                               std::span<const api::Partition* const> partitions, core::JobId id,
                               const std::string& user, core::Time submitTime,
                               std::size_t clusterNodes);

// The time limit of a job that asked for none: the DefaultTime of the first partition it names
// (slurmctld sets it at submission), else the DefaultTime or MaxTime of `runsIn`, the partition
// it started in (select_nodes sets it then). For a job of one partition the two are the same.
core::Duration defaultTimeLimit(const api::Partition* first, const api::Partition* runsIn);

}  // namespace kubeslurm::controllers
