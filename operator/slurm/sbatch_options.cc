#include "operator/slurm/sbatch_options.h"

namespace kubeslurm::slurm {}  // namespace kubeslurm::slurm
