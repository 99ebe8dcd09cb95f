// Fair-share usage as the leader keeps it between cycles, and the Account statuses that persist
// it (sshare's RawUsage, NormShares, EffectvUsage and FairShare; the jobs each account runs).
//
// The usage lives in memory, by account and user, and each cycle advances it to its `now`
// (core::advanceUsage: decay by PriorityDecayHalfLife, plus what the running jobs used since).
// The Accounts' status.rawUsage is its checkpoint: read once per leadership term, written every
// usagePersistPeriod and whenever a running job ends. A write lost to a conflict must not lose
// the usage of a job that ended meanwhile, so the figure is carried here from cycle to cycle,
// not read back from the status.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "controllers/snapshot.h"
#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/core/model.h"

namespace kubeslurm::controllers {

class UsageLedger {
 public:
  // Advances usage to `now` and leaves it in `snapshot` (each account's rawUsage, usageTime).
  // The first call of a term starts from the snapshot's figures (the persisted statuses); later
  // ones from the figures this ledger kept, whatever the snapshot's say.
  void advance(core::Snapshot& snapshot, core::Time now);
  // Leadership ended: the next term starts from what was persisted.
  void reset();
  // The GPU-seconds the last advance added, by (account, user), undecayed
  // (core::gpuSecondsHeld): from the cycle before to this one. The first cycle of a term adds
  // none: the leader before counted up to its last cycle, and what fell between its last cycle
  // and this term's first is not counted again (nor at all: the accounting store has it).
  const std::map<std::pair<std::string, std::string>, double>& lastGpuSeconds() const {
    return gpuSeconds_;
  }

 private:
  std::map<std::string, double> usage_;  // by account '\0' user
  std::map<std::pair<std::string, std::string>, double> gpuSeconds_;
  core::Time asOf_ = 0;
  bool loaded_ = false;
};

// PURE. Each Account's next status: rawUsage from the snapshot's account association (as the
// ledger advanced it), normShares, effectiveUsage and fairShare from the plan's row for the
// account (not its users'), its running and pending jobs among the snapshot's (a job in
// `leftRunning`, which this cycle moved out of RUNNING, counts in neither), lastDecay `now`.
std::vector<api::Account> accountStatuses(const std::vector<api::Account>& accounts,
                                          const SnapshotIndex& index,
                                          const std::vector<core::FairShareRow>& fairShare,
                                          const std::set<std::string>& leftRunning, core::Time now);

}  // namespace kubeslurm::controllers
