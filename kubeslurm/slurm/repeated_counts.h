// Slurm's run-length text for per-node counts, as in SLURM_TASKS_PER_NODE and
// SLURM_JOB_CPUS_PER_NODE: consecutive equal values collapse to "V(xN)", runs are joined by ','
// ("2(x3),1" for 2,2,2,1; "1(x4)" for four nodes of one task). A run of one is the bare value.
// This is what slurmctld's uint32_compressed_to_str() writes; the reference cluster shows
// SLURM_TASKS_PER_NODE=1(x4) for 4 nodes x 1 task (shared/reference/slurm-22.05.md).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/base/status.h"

namespace kubeslurm::slurm {

std::string formatRepeatedCounts(std::span<const std::uint32_t> counts);

// The inverse, for srun and the step agent reading the variables back. Errors name the text.
StatusOr<std::vector<std::uint32_t>> parseRepeatedCounts(std::string_view text);

}  // namespace kubeslurm::slurm
