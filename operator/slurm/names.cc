#include "operator/slurm/names.h"

namespace kubeslurm::slurm {}  // namespace kubeslurm::slurm
