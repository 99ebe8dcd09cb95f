#include "controllers/partition_status.h"

#include <algorithm>

namespace kubeslurm::controllers {

NodeLoad nodeLoad(const core::Snapshot& snapshot) {
  NodeLoad load;
  load.jobGpus.assign(snapshot.nodes.size(), 0);
  load.foreignGpus.assign(snapshot.nodes.size(), 0);
  for (const core::Job& job : snapshot.jobs) {
    if (job.phase != core::JobPhase::kRunning) continue;
    const std::uint32_t perNode = job.perNodeAllocation().gpus;
    for (const core::NodeIndex node : job.allocatedNodes) {
      if (node < load.jobGpus.size()) load.jobGpus[node] += perNode;
    }
  }
  for (std::size_t i = 0; i < snapshot.nodes.size(); ++i) {
    const core::Node& node = snapshot.nodes[i];
    load.jobGpus[i] = std::min(load.jobGpus[i], node.allocatable.gpus);
    load.foreignGpus[i] = std::min(node.foreignUsed.gpus, node.allocatable.gpus - load.jobGpus[i]);
  }
  return load;
}

std::string nodeStateName(const core::Node& node, std::uint32_t jobGpus,
                          std::uint32_t foreignGpus) {
  if (node.state == core::NodeState::kDrain) return "drain";
  if (node.state != core::NodeState::kUp) return "down";
  if (jobGpus == 0 && foreignGpus == 0) return "idle";
  return jobGpus + foreignGpus >= node.allocatable.gpus ? "allocated" : "mixed";
}

PartitionFigures partitionFigures(const api::Partition& partition, const core::Snapshot& snapshot,
                                  const NodeLoad& load) {
  PartitionFigures figures;
  api::PartitionStatus& status = figures.status;
  status.conditions = partition.status.conditions;
  const auto core =
      std::find_if(snapshot.partitions.begin(), snapshot.partitions.end(),
                   [&](const core::Partition& p) { return p.name == partition.metadata.name; });
  if (core == snapshot.partitions.end()) return figures;
  for (const core::NodeIndex i : core->nodes) {
    if (i >= snapshot.nodes.size() || i >= load.jobGpus.size()) continue;
    const core::Node& node = snapshot.nodes[i];
    const std::string state = nodeStateName(node, load.jobGpus[i], load.foreignGpus[i]);
    const auto gpus = static_cast<std::int32_t>(node.allocatable.gpus);
    const auto used = static_cast<std::int32_t>(load.jobGpus[i] + load.foreignGpus[i]);
    ++status.nodes;
    status.gpus += gpus;
    if (state == "drain") {
      ++status.drainedNodes;
      figures.load.gpusUnavailable += gpus;
    } else if (state == "down") {
      ++status.downNodes;
      figures.load.gpusUnavailable += gpus;
    } else {
      status.allocatedGpus += used;
      status.idleGpus += gpus - used;
      figures.load.gpusAllocated += load.jobGpus[i];
      figures.load.gpusForeign += load.foreignGpus[i];
      figures.load.gpusFree += gpus - used;
      ++(state == "idle"    ? status.idleNodes
         : state == "mixed" ? status.mixedNodes
                            : status.allocatedNodes);
    }
  }
  for (const core::Job& job : snapshot.jobs) {
    const bool here = job.partition == partition.metadata.name ||
                      (job.phase != core::JobPhase::kRunning &&
                       std::ranges::find(job.otherPartitions, partition.metadata.name) !=
                           job.otherPartitions.end());
    if (!here) continue;
    ++(job.phase == core::JobPhase::kRunning ? status.runningJobs : status.pendingJobs);
  }
  figures.load.pendingJobs = status.pendingJobs;
  figures.load.runningJobs = status.runningJobs;
  return figures;
}

bool setValidCondition(std::vector<api::Condition>& conditions, const std::string& reason,
                       const std::string& message, std::int64_t now) {
  api::Condition next;
  next.type = std::string(kPartitionValidCondition);
  next.status = reason.empty() ? "True" : "False";
  next.reason = reason.empty() ? "Valid" : reason;
  // Never empty: v1.20's CRD validation reads "" here as null and refuses the write.
  next.message = reason.empty() ? "the partition's settings are valid" : message;
  next.lastTransitionTime = now;
  auto it = std::ranges::find(conditions, next.type, &api::Condition::type);
  if (it == conditions.end()) {
    conditions.push_back(std::move(next));
    return true;
  }
  if (it->status == next.status && it->reason == next.reason && it->message == next.message) {
    return false;
  }
  if (it->status == next.status && it->lastTransitionTime) {
    next.lastTransitionTime = it->lastTransitionTime;
  }
  next.raw = it->raw;
  *it = std::move(next);
  return true;
}

bool sameFigures(const api::PartitionStatus& a, const api::PartitionStatus& b) {
  return a.nodes == b.nodes && a.idleNodes == b.idleNodes && a.mixedNodes == b.mixedNodes &&
         a.allocatedNodes == b.allocatedNodes && a.downNodes == b.downNodes &&
         a.drainedNodes == b.drainedNodes && a.gpus == b.gpus &&
         a.allocatedGpus == b.allocatedGpus && a.idleGpus == b.idleGpus &&
         a.pendingJobs == b.pendingJobs && a.runningJobs == b.runningJobs;
}

}  // namespace kubeslurm::controllers
