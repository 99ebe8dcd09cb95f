// QOS and association limits, enforced as Slurm's src/slurmctld/acct_policy.c (22.05) does with
// AccountingStorageEnforce=limits,qos.
//
// Two checks, in Slurm's order:
//   pre-select  (acct_policy_job_runnable_pre_select), before nodes are chosen: job counts and
//               wall time. The QOS first (GrpJobs, MaxJobsPerUser, MaxWall), then each
//               association from the job's up to the root: GrpJobs at every level; MaxJobs and
//               MaxWall at the job's own, where inheritance has already put the nearest set value.
//   post-select (acct_policy_job_runnable_post_select), once nodes are known: TRES. The QOS
//               (GrpTRES, MaxTRESPerJob, MaxTRESPerUser), then the associations (GrpTRES at every
//               level, MaxTRESPerJob at the job's own). Within one limit, node is tested before
//               gres/gpu: that is the order of Slurm's TRES table.
// A limit the QOS sets makes the association's limit of the same kind moot.
//
// A job a limit holds back does not block its partition (job_scheduler.c: "delayed for
// accounting policy"), and backfill gives it no reservation (backfill.c skips a job that fails
// either check). Usage is what running jobs hold; jobs this cycle starts are charged as they go.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kubeslurm/core/model.h"
#include "kubeslurm/core/priority.h"

namespace kubeslurm::core {

class AccountingPolicy {
 public:
  AccountingPolicy(const Snapshot& snapshot, const FairShareTree& associations);

  // Whether the snapshot has QOS definitions at all (else QOS names go unchecked).
  bool qosDefined() const { return !snapshot_.qos.empty(); }
  // The job's QOS record; nullptr when there are no definitions or the name is unknown.
  const Qos* qosOf(const Job& job) const;
  // Whether a job of QOS `preemptor` may preempt one of QOS `victim` (preempt/qos).
  bool mayPreempt(const Job& preemptor, const Job& victim) const;

  // kNone, or the reason the limits hold the job back.
  slurm::PendingReason preSelect(const Job& job) const;
  slurm::PendingReason postSelect(const Job& job, std::uint64_t nodes) const;
  // The job starts on `nodes` nodes: it now counts against every limit it is under.
  void charge(const Job& job, std::uint64_t nodes);

 private:
  struct Usage {
    std::uint64_t jobs = 0;
    std::uint64_t gpus = 0;
    std::uint64_t nodes = 0;
  };
  std::optional<std::uint32_t> associationOf(const Job& job) const;
  std::optional<std::uint32_t> qosIndex(const Job& job) const;
  // Max* limits are inherited: the nearest value set from the association upward.
  template <typename Get>
  auto inherited(std::uint32_t association, Get get) const -> decltype(get(AssociationLimits{}));
  static std::string userKey(std::uint32_t index, std::string_view user);
  void add(const Job& job, std::uint64_t nodes);

  const Snapshot& snapshot_;
  const FairShareTree& associations_;
  bool anyLimit_ = false;  // nothing to check or count otherwise
  std::unordered_map<std::string_view, std::uint32_t> qosByName_;
  std::vector<Usage> qosUsage_;
  std::unordered_map<std::string, Usage> qosUserUsage_;  // "qos index\0user"
  std::vector<Usage> associationUsage_;                  // each association and all below it
  // Running jobs per (association, user), for MaxJobs: Slurm charges every job to a user
  // association, so MaxJobs is per user; a job charged to an account association (the operator
  // has no user associations) counts for its user there.
  std::unordered_map<std::string, std::uint64_t> associationUserJobs_;
};

}  // namespace kubeslurm::core
