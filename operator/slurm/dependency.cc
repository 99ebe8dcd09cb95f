#include "operator/slurm/dependency.h"

namespace kubeslurm::slurm {}  // namespace kubeslurm::slurm
