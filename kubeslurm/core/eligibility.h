// Whether a pending job may be scheduled at all this cycle, and if not, the reason Slurm shows.
//
// The order of the tests is Slurm's (job_scheduler.c _job_runnable_test1/2, job_mgr.c
// job_independent and job_limits_check): held, dependency, array task limit, begin time, then the
// partition's limits (time, nodes, accounts), then its state. A job that passes them all competes
// for resources (Resources / Priority are decided by the scheduling passes).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kubeslurm/core/model.h"

namespace kubeslurm::core {

enum class DependencyState { kSatisfied, kWaiting, kNeverSatisfied };

// Jobs by id and by array, pending/running and finished, for dependency tests.
class JobDirectory {
 public:
  explicit JobDirectory(const Snapshot& snapshot);

  // The state of one dependency expression for `self` at `now` (test_job_dependency):
  //   after       the target started (or ended) `+delay` minutes ago
  //   afterany    the target ended, however
  //   afterok     the target COMPLETED (exit 0); never when it ended otherwise
  //   afternotok  the target ended other than COMPLETED; never when it completed
  //   aftercorr   the same task of the target array completed (afterok per task)
  //   singleton   no other job of the same name and user is running, or pending with a lower id
  // A target id that matches no job counts as satisfied ("job is gone, dependency lifted": the
  // reference shows afterok:99999 running at once). An id that names an array means all its tasks.
  // Terms joined by ',' must all hold (one that can never hold fails the job); joined by '?',
  // one is enough (all failing fails it).
  // `states` (if given) receives each target's state, in term and target order.
  DependencyState evaluate(const slurm::DependencySpec& spec, const Job& self, Time now,
                           std::vector<slurm::DependencyState>* states = nullptr) const;

 private:
  enum class Kind : std::uint8_t { kLive, kFinished, kUnplanned };
  struct Ref {
    Kind kind = Kind::kLive;
    std::uint32_t index = 0;
  };
  struct Status {  // of one target record or of a whole array
    bool found = false;
    bool pending = false;    // not started
    bool completed = false;  // ended, in whatever state
    bool ok = false;         // ended COMPLETED with exit code 0
    bool specialExit = false;
    Time started = 0;
  };
  enum class Outcome { kFulfilled, kWaiting, kFailed };

  Status statusOf(const Ref& ref) const;
  Status arrayStatus(JobId arrayId) const;
  Status targetStatus(const slurm::DependencyTarget& target) const;
  Status taskStatus(JobId arrayId, std::uint32_t task) const;
  Outcome outcome(slurm::DependencyType type, const slurm::DependencyTarget& target,
                  const Job& self, Time now) const;
  Outcome singleton(const Job& self) const;

  struct NameGroup {  // jobs of one (user, name), for singleton
    bool running = false;
    JobId lowestPending = 0;
    bool anyPending = false;
  };

  const Snapshot& snapshot_;
  std::unordered_map<std::string, NameGroup> byName_;  // "user\0name", only when needed
  std::unordered_map<JobId, Ref> byId_;
  std::unordered_map<JobId, std::vector<Ref>> byArray_;
};

struct Verdict {
  slurm::PendingReason reason = slurm::PendingReason::kNone;
  std::string detail;    // e.g. "UnavailableNodes:gpu-node-007"
  bool accruing = true;  // whether age accrues (not while held, dependent or before --begin)
  std::vector<slurm::DependencyState> dependencyStates;  // while the dependency binds
};

}  // namespace kubeslurm::core
