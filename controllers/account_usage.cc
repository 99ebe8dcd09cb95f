#include "controllers/account_usage.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "kubeslurm/core/usage.h"

namespace kubeslurm::controllers {

namespace {

std::string associationKey(const core::Account& account) {
  return account.name + '\0' + account.user;
}

}  // namespace

void UsageLedger::advance(core::Snapshot& snapshot, core::Time now) {
  gpuSeconds_.clear();
  if (loaded_) {
    gpuSeconds_ = core::gpuSecondsHeld(snapshot, asOf_, now);
    for (core::Account& a : snapshot.accounts) {
      if (auto it = usage_.find(associationKey(a)); it != usage_.end()) a.rawUsage = it->second;
    }
    snapshot.usageTime = asOf_;
  }
  const std::vector<core::Account> advanced = core::advanceUsage(snapshot, now);
  usage_.clear();
  for (std::size_t i = 0; i < advanced.size() && i < snapshot.accounts.size(); ++i) {
    snapshot.accounts[i].rawUsage = advanced[i].rawUsage;
    usage_[associationKey(advanced[i])] = advanced[i].rawUsage;
  }
  snapshot.usageTime = std::max(now, snapshot.usageTime);
  asOf_ = snapshot.usageTime;
  loaded_ = true;
}

void UsageLedger::reset() {
  usage_.clear();
  gpuSeconds_.clear();
  loaded_ = false;
}

std::vector<api::Account> accountStatuses(const std::vector<api::Account>& accounts,
                                          const SnapshotIndex& index,
                                          const std::vector<core::FairShareRow>& fairShare,
                                          const std::set<std::string>& leftRunning,
                                          core::Time now) {
  std::map<std::string, std::pair<std::int32_t, std::int32_t>> jobs;  // running, pending
  for (const core::Job& job : index.snapshot.jobs) {
    auto key = index.jobKeys.find(job.id);
    if (key != index.jobKeys.end() && leftRunning.contains(key->second)) continue;
    auto& counts = jobs[job.account];
    (job.phase == core::JobPhase::kRunning ? counts.first : counts.second) += 1;
  }
  std::vector<api::Account> out;
  out.reserve(accounts.size());
  for (const api::Account& account : accounts) {
    api::Account next = account;
    for (const core::Account& a : index.snapshot.accounts) {
      if (a.name == account.metadata.name && a.user.empty()) next.status.rawUsage = a.rawUsage;
    }
    for (const core::FairShareRow& row : fairShare) {
      if (row.account != account.metadata.name || !row.user.empty()) continue;
      next.status.normShares = row.normShares;
      next.status.effectiveUsage = row.effectiveUsage;
      next.status.fairShare = row.fairShare;
    }
    next.status.runningJobs = jobs[account.metadata.name].first;
    next.status.pendingJobs = jobs[account.metadata.name].second;
    next.status.lastDecay = now;
    out.push_back(std::move(next));
  }
  return out;
}

}  // namespace kubeslurm::controllers
