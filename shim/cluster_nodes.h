// What sinfo and scontrol show partition/node read of the cluster: the Partitions, the Nodes
// (natural order of names) and each node's figures from the pods bound to it (every namespace:
// a node's load is whoever runs there). Implemented in sinfo_cmd.cc.
#pragma once

#include <vector>

#include "operator/api/core_types.h"
#include "operator/api/kubeslurm_types.h"
#include "operator/base/status.h"
#include "operator/kube/client.h"
#include "shim/sinfo_format.h"

namespace kubeslurm::shim {

struct ClusterNodes {
  std::vector<api::Partition> partitions;
  std::vector<api::Node> nodes;
  std::vector<NodeFacts> facts;  // one per node, same order
};

StatusOr<ClusterNodes> loadClusterNodes(kube::Reader& reader);

}  // namespace kubeslurm::shim
