// What sinfo and scontrol show partition/node read of the cluster: the Partitions, the Nodes
// (natural order of names) and each node's figures from the pods bound to it (every namespace:
// a node's load is whoever runs there). Implemented in sinfo_cmd.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/base/status.h"
#include "kubeslurm/cli/sinfo_format.h"
#include "kubeslurm/kube/client.h"

namespace kubeslurm::cli {

struct ClusterNodes {
  std::vector<api::Partition> partitions;
  std::vector<api::Node> nodes;
  std::vector<NodeFacts> facts;  // one per node, same order
};

StatusOr<ClusterNodes> loadClusterNodes(kube::Reader& reader);

// The Nodes alone, in natural order of names (slurm.conf's order, which decides a partition's
// first node).
StatusOr<std::vector<api::Node>> loadNodes(kube::Reader& reader);

// The allocatable memory (MB) of a partition's first node among `nodes` (in natural order), as
// slurmctld's _mem_per_node_part counts "all of each node's memory" for a job that asks for
// none; none for a partition without nodes.
std::optional<std::uint64_t> firstNodeMemoryMb(const api::PartitionSpec& partition,
                                               const std::vector<api::Node>& nodes);

}  // namespace kubeslurm::cli
