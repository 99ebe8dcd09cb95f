// What a Partition's status and the operator's metrics say of the cluster, read off the
// snapshot a cycle planned with: each node in one of sinfo's states (idle, mixed, allocated,
// drain, down) by the GPUs held on it, and each partition's nodes, GPUs and jobs. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/core/model.h"

namespace kubeslurm::controllers {

// What a node offers and holds, from a snapshot: per NodeIndex, GPUs held by running SlurmJobs
// and by everything else (capped at the node's allocatable GPUs, jobs first).
struct NodeLoad {
  std::vector<std::uint32_t> jobGpus;
  std::vector<std::uint32_t> foreignGpus;
};
NodeLoad nodeLoad(const core::Snapshot& snapshot);

// sinfo's node states as Partition status and the metrics count them: idle, mixed, allocated,
// drain, down.
std::string nodeStateName(const core::Node& node, std::uint32_t jobGpus, std::uint32_t foreignGpus);

// A partition's GPUs and jobs as the metrics count them (nodes in two partitions count in both).
struct PartitionLoad {
  std::int64_t gpusAllocated = 0;    // held by running SlurmJobs
  std::int64_t gpusForeign = 0;      // held by other pods
  std::int64_t gpusFree = 0;         // on nodes that are up
  std::int64_t gpusUnavailable = 0;  // on drained or down nodes
  std::int64_t pendingJobs = 0;
  std::int64_t runningJobs = 0;
};

struct PartitionFigures {
  api::PartitionStatus status;  // conditions kept from `partition`
  PartitionLoad load;
};

// `partition` as the snapshot shows it: its nodes by state and their GPUs (a drained or down
// node's GPUs are neither allocated nor idle), its running jobs, and its pending ones — a
// pending job that names several partitions (sbatch -p a,b) waits in each, as squeue -p lists
// it. A partition the snapshot does not know (no nodes matched) has zero figures.
PartitionFigures partitionFigures(const api::Partition& partition, const core::Snapshot& snapshot,
                                  const NodeLoad& load);

// The partition's Valid condition: False, with `reason` and `message`, when its settings are
// wrong (a Nodes= or topology.conf that does not parse, two memory defaults, ...; `reason`
// empty when none is), else True. lastTransitionTime moves only with the status. Returns
// whether the condition changed.
inline constexpr std::string_view kPartitionValidCondition = "Valid";
bool setValidCondition(std::vector<api::Condition>& conditions, const std::string& reason,
                       const std::string& message, std::int64_t now);

// Whether two statuses show the same figures (conditions aside): the status is written only
// when they moved.
bool sameFigures(const api::PartitionStatus& a, const api::PartitionStatus& b);

}  // namespace kubeslurm::controllers
