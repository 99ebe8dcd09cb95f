#include "operator/slurm/topology_conf.h"

namespace kubeslurm::slurm {}  // namespace kubeslurm::slurm
