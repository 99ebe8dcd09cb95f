#include "operator/slurm/array_spec.h"

namespace kubeslurm::slurm {}  // namespace kubeslurm::slurm
