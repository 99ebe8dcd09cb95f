#include "kubeslurm/core/model.h"

namespace kubeslurm::core {

// Exactly what the job's pod on one node requests. An exclusive job holds the whole node besides;
// the scheduler accounts for that per node (it depends on the node), not here.
Resources Job::perNodeAllocation() const {
  return {gpusPerNode, cpuMillisPerNode, memoryBytesPerNode};
}

}  // namespace kubeslurm::core
