#include "kubeslurm/core/accounting_policy.h"

#include <algorithm>

namespace kubeslurm::core {

namespace {

using slurm::PendingReason;

bool any(const TresLimit& t) { return t.gpus || t.nodes; }

bool anyLimit(const AssociationLimits& l) {
  return l.grpJobs || any(l.grpTres) || l.maxJobs || any(l.maxTresPerJob) || l.maxWallPerJob;
}

bool anyLimit(const Qos& q) {
  return q.grpJobs || any(q.grpTres) || q.maxJobsPerUser || any(q.maxTresPerUser) ||
         any(q.maxTresPerJob) || q.maxWallPerJob;
}

// _validate_tres_usage_limits with safe limits: a TRES the job asks none of is never held back;
// otherwise what it asks plus what is in use must stay within the limit.
bool exceeds(const std::optional<std::uint64_t>& limit, std::uint64_t request, std::uint64_t used) {
  return limit && request > 0 && (request > *limit || used > *limit - request);
}

}  // namespace

AccountingPolicy::AccountingPolicy(const Snapshot& snapshot, const FairShareTree& associations)
    : snapshot_(snapshot), associations_(associations) {
  for (std::uint32_t q = 0; q < snapshot.qos.size(); ++q) {
    qosByName_.emplace(snapshot.qos[q].name, q);
    anyLimit_ = anyLimit_ || anyLimit(snapshot.qos[q]);
  }
  for (const Account& a : snapshot.accounts) anyLimit_ = anyLimit_ || anyLimit(a.limits);
  if (!anyLimit_) return;
  qosUsage_.resize(snapshot.qos.size());
  associationUsage_.resize(associations.size());
  for (const Job& job : snapshot.jobs) {
    if (job.phase == JobPhase::kRunning) add(job, job.allocatedNodes.size());
  }
}

std::optional<std::uint32_t> AccountingPolicy::qosIndex(const Job& job) const {
  if (qosByName_.empty()) return std::nullopt;
  auto it = qosByName_.find(job.qos);
  if (it == qosByName_.end()) return std::nullopt;
  return it->second;
}

const Qos* AccountingPolicy::qosOf(const Job& job) const {
  const auto q = qosIndex(job);
  return q ? &snapshot_.qos[*q] : nullptr;
}

bool AccountingPolicy::mayPreempt(const Job& preemptor, const Job& victim) const {
  const Qos* q = qosOf(preemptor);
  return q != nullptr && !victim.qos.empty() &&
         std::find(q->preempt.begin(), q->preempt.end(), victim.qos) != q->preempt.end();
}

std::optional<std::uint32_t> AccountingPolicy::associationOf(const Job& job) const {
  if (associations_.empty()) return std::nullopt;
  return associations_.associationOf(job.account, job.user);
}

template <typename Get>
auto AccountingPolicy::inherited(std::uint32_t association, Get get) const
    -> decltype(get(AssociationLimits{})) {
  for (std::optional<std::uint32_t> a = association; a; a = associations_.parentOf(*a)) {
    const Account* account = associations_.accountOf(*a);
    if (account == nullptr) continue;
    if (auto value = get(account->limits)) return value;
  }
  return std::nullopt;
}

std::string AccountingPolicy::userKey(std::uint32_t index, std::string_view user) {
  std::string key = std::to_string(index);
  key.push_back('\0');
  key.append(user);
  return key;
}

void AccountingPolicy::add(const Job& job, std::uint64_t nodes) {
  const std::uint64_t gpus = std::uint64_t{job.gpusPerNode} * nodes;
  auto charge = [&](Usage& u) {
    ++u.jobs;
    u.gpus += gpus;
    u.nodes += nodes;
  };
  if (const auto q = qosIndex(job)) {
    charge(qosUsage_[*q]);
    charge(qosUserUsage_[userKey(*q, job.user)]);
  }
  const auto own = associationOf(job);
  if (own) ++associationUserJobs_[userKey(*own, job.user)];
  for (auto a = own; a; a = associations_.parentOf(*a)) charge(associationUsage_[*a]);
}

void AccountingPolicy::charge(const Job& job, std::uint64_t nodes) {
  if (anyLimit_) add(job, nodes);
}

PendingReason AccountingPolicy::preSelect(const Job& job) const {
  if (!anyLimit_) return PendingReason::kNone;
  const auto qi = qosIndex(job);
  const Qos* q = qi ? &snapshot_.qos[*qi] : nullptr;
  if (q != nullptr) {  // _qos_job_runnable_pre_select
    if (q->grpJobs && qosUsage_[*qi].jobs >= *q->grpJobs) return PendingReason::kQOSGrpJobsLimit;
    if (q->maxJobsPerUser) {
      auto it = qosUserUsage_.find(userKey(*qi, job.user));
      if (it != qosUserUsage_.end() && it->second.jobs >= *q->maxJobsPerUser) {
        return PendingReason::kQOSMaxJobsPerUserLimit;
      }
    }
    if (q->maxWallPerJob && job.timeLimit > *q->maxWallPerJob) {
      return PendingReason::kQOSMaxWallDurationPerJobLimit;
    }
  }
  const auto own = associationOf(job);
  for (auto a = own; a; a = associations_.parentOf(*a)) {
    const Account* account = associations_.accountOf(*a);
    const Usage& used = associationUsage_[*a];
    if (account != nullptr && (q == nullptr || !q->grpJobs) && account->limits.grpJobs &&
        used.jobs >= *account->limits.grpJobs) {
      return PendingReason::kAssocGrpJobsLimit;
    }
    if (a != own) continue;  // Max* limits are the job's own association's (inherited)
    const auto maxJobs = inherited(*a, [](const AssociationLimits& l) { return l.maxJobs; });
    if ((q == nullptr || !q->maxJobsPerUser) && maxJobs) {
      auto it = associationUserJobs_.find(userKey(*a, job.user));
      if (it != associationUserJobs_.end() && it->second >= *maxJobs) {
        return PendingReason::kAssocMaxJobsLimit;
      }
    }
    const auto maxWall = inherited(*a, [](const AssociationLimits& l) { return l.maxWallPerJob; });
    if ((q == nullptr || !q->maxWallPerJob) && maxWall && job.timeLimit > *maxWall) {
      return PendingReason::kAssocMaxWallDurationPerJobLimit;
    }
  }
  return PendingReason::kNone;
}

PendingReason AccountingPolicy::postSelect(const Job& job, std::uint64_t nodes) const {
  if (!anyLimit_) return PendingReason::kNone;
  const std::uint64_t gpus = std::uint64_t{job.gpusPerNode} * nodes;
  const auto qi = qosIndex(job);
  const Qos* q = qi ? &snapshot_.qos[*qi] : nullptr;
  if (q != nullptr) {  // _qos_job_runnable_post_select
    const Usage& used = qosUsage_[*qi];
    if (exceeds(q->grpTres.nodes, nodes, used.nodes)) return PendingReason::kQOSGrpNodeLimit;
    if (exceeds(q->grpTres.gpus, gpus, used.gpus)) return PendingReason::kQOSGrpGRES;
    if (exceeds(q->maxTresPerJob.nodes, nodes, 0)) return PendingReason::kQOSMaxNodePerJobLimit;
    if (exceeds(q->maxTresPerJob.gpus, gpus, 0)) return PendingReason::kQOSMaxGRESPerJob;
    auto it = qosUserUsage_.find(userKey(*qi, job.user));
    const Usage user = it != qosUserUsage_.end() ? it->second : Usage{};
    if (exceeds(q->maxTresPerUser.nodes, nodes, user.nodes)) {
      return PendingReason::kQOSMaxNodePerUserLimit;
    }
    if (exceeds(q->maxTresPerUser.gpus, gpus, user.gpus)) return PendingReason::kQOSMaxGRESPerUser;
  }
  const TresLimit none;
  const TresLimit& qosGrp = q != nullptr ? q->grpTres : none;
  const TresLimit& qosPerJob = q != nullptr ? q->maxTresPerJob : none;
  const auto own = associationOf(job);
  for (auto a = own; a; a = associations_.parentOf(*a)) {
    const Account* account = associations_.accountOf(*a);
    const Usage& used = associationUsage_[*a];
    if (account != nullptr) {
      const TresLimit& grp = account->limits.grpTres;
      if (!qosGrp.nodes && exceeds(grp.nodes, nodes, used.nodes)) {
        return PendingReason::kAssocGrpNodeLimit;
      }
      if (!qosGrp.gpus && exceeds(grp.gpus, gpus, used.gpus)) return PendingReason::kAssocGrpGRES;
    }
    if (a != own) continue;
    const auto maxNodes =
        inherited(*a, [](const AssociationLimits& l) { return l.maxTresPerJob.nodes; });
    if (!qosPerJob.nodes && exceeds(maxNodes, nodes, 0)) {
      return PendingReason::kAssocMaxNodePerJobLimit;
    }
    const auto maxGpus =
        inherited(*a, [](const AssociationLimits& l) { return l.maxTresPerJob.gpus; });
    if (!qosPerJob.gpus && exceeds(maxGpus, gpus, 0)) return PendingReason::kAssocMaxGRESPerJob;
  }
  return PendingReason::kNone;
}

}  // namespace kubeslurm::core
