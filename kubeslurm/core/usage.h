// Usage over time: fair-share's accrual and decay (Slurm's priority/multifactor decay thread),
// and the undecayed GPU-seconds a chargeback counts. PURE: time is a parameter.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kubeslurm/core/model.h"

namespace kubeslurm::core {

// Usage accrual and decay for fair-share: returns the accounts with rawUsage advanced from
// snapshot.usageTime to `now`: decayed by exp(ln 0.5 * dt / halfLife) and increased by what the
// running jobs consumed (billing-weighted GPU-seconds), and the ended ones up to their end.
std::vector<Account> advanceUsage(const Snapshot& snapshot, Time now);

// GPU-seconds the running jobs held from `since` to `now`, and the ended ones up to their end,
// by (account, user): GPUs as fair-share charges them (an exclusive job's whole nodes), neither
// weighted nor decayed. What a chargeback counts; a job's seconds before `since` are not.
std::map<std::pair<std::string, std::string>, double> gpuSecondsHeld(const Snapshot& snapshot,
                                                                     Time since, Time now);

}  // namespace kubeslurm::core
