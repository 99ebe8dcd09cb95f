#include "operator/slurm/time_format.h"

namespace kubeslurm::slurm {}  // namespace kubeslurm::slurm
