#include "kubeslurm/core/model.h"

namespace kubeslurm::core {

// Exactly what the job's pod on one node requests. An exclusive job holds the whole node besides;
// the scheduler accounts for that per node (it depends on the node), not here.
Resources Job::perNodeAllocation() const {
  return {gpusPerNode, cpuMillisPerNode, memoryBytesPerNode};
}

const PartitionShape* Job::shapeIn(std::string_view partitionName) const {
  if (otherShapes.empty() || partitionName == partition) return nullptr;
  for (const PartitionShape& shape : otherShapes) {
    if (shape.partition == partitionName) return &shape;
  }
  return nullptr;
}

Resources Job::perNodeAllocationIn(std::string_view partitionName) const {
  const PartitionShape* shape = shapeIn(partitionName);
  if (shape == nullptr) return perNodeAllocation();
  return {gpusPerNode, shape->cpuMillisPerNode, shape->memoryBytesPerNode};
}

bool Job::allNodeMemoryIn(std::string_view partitionName) const {
  const PartitionShape* shape = shapeIn(partitionName);
  return shape != nullptr ? shape->allNodeMemory : allNodeMemory;
}

bool Job::holdsWholeNodesIn(std::string_view partitionName) const {
  return exclusive || allNodeMemoryIn(partitionName);
}

}  // namespace kubeslurm::core
