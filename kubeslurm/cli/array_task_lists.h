// The lists on an array's SlurmJob of tasks the operator has not made yet that commands add to:
// spec.cancelTasks (scancel A_T) and spec.splitTasks (scontrol hold|release|update A_T), both in
// sbatch --array's index syntax (api/slurmjob.h).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/base/status.h"
#include "kubeslurm/cli/kube_access.h"

namespace kubeslurm::cli {

// Adds `tasks` to the list `field` of `array`: one merge patch carrying the array's
// resourceVersion, so that two commands naming different tasks do not overwrite each other's
// list. On a conflict the array is read again (a list by name, which a tenant may do) and the
// union sent again, up to three times. The API error otherwise.
Status addArrayTasks(ClusterSession& session, const api::SlurmJobObject& array,
                     std::string_view field, const std::vector<std::uint32_t>& tasks);

}  // namespace kubeslurm::cli
