#include "operator/slurm/hostlist.h"

namespace kubeslurm::slurm {}  // namespace kubeslurm::slurm
