#include "operator/slurm/filename_pattern.h"

namespace kubeslurm::slurm {}  // namespace kubeslurm::slurm
