// What sinfo and scontrol show partition/node read of the cluster: the Partitions, the Nodes
// (natural order of names) and each node's figures from the pods bound to it (every namespace:
// a node's load is whoever runs there). Implemented in sinfo_cmd.cc.
#pragma once

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

}  // namespace kubeslurm::cli
