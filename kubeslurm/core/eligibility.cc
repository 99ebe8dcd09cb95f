#include "kubeslurm/core/eligibility.h"

#include <algorithm>

namespace kubeslurm::core {

namespace {
constexpr Duration kSecondsPerMinute = 60;

std::string nameKey(const Job& job) {
  std::string key = job.user;
  key.push_back('\0');
  key += job.name;
  return key;
}

bool usesSingleton(const Job& job) {
  return job.dependency &&
         std::any_of(job.dependency->terms.begin(), job.dependency->terms.end(),
                     [](const auto& t) { return t.type == slurm::DependencyType::kSingleton; });
}
}  // namespace

JobDirectory::JobDirectory(const Snapshot& snapshot) : snapshot_(snapshot) {
  byId_.reserve(snapshot.jobs.size() + snapshot.finished.size() + snapshot.unplanned.size());
  for (std::size_t i = 0; i < snapshot.finished.size(); ++i) {
    const FinishedJob& f = snapshot.finished[i];
    const Ref ref{Kind::kFinished, static_cast<std::uint32_t>(i)};
    byId_[f.id] = ref;
    if (f.arrayJobId) byArray_[*f.arrayJobId].push_back(ref);
  }
  for (std::size_t i = 0; i < snapshot.unplanned.size(); ++i) {
    const UnplannedJob& u = snapshot.unplanned[i];
    const Ref ref{Kind::kUnplanned, static_cast<std::uint32_t>(i)};
    byId_[u.id] = ref;
    if (u.arrayJobId) byArray_[*u.arrayJobId].push_back(ref);
  }
  // Live jobs win over a stale finished record of the same id (a requeued job).
  for (std::size_t i = 0; i < snapshot.jobs.size(); ++i) {
    const Job& j = snapshot.jobs[i];
    const Ref ref{Kind::kLive, static_cast<std::uint32_t>(i)};
    byId_[j.id] = ref;
    if (j.arrayJobId) byArray_[*j.arrayJobId].push_back(ref);
  }
  if (std::none_of(snapshot.jobs.begin(), snapshot.jobs.end(), usesSingleton)) return;
  for (const Job& j : snapshot.jobs) {
    NameGroup& g = byName_[nameKey(j)];
    if (j.phase == JobPhase::kRunning) g.running = true;
    if (j.phase == JobPhase::kPending && (!g.anyPending || j.id < g.lowestPending)) {
      g.lowestPending = j.id;
      g.anyPending = true;
    }
  }
}

JobDirectory::Status JobDirectory::statusOf(const Ref& ref) const {
  Status s;
  s.found = true;
  if (ref.kind == Kind::kUnplanned) {
    // Not started as far as a dependency can tell: a gang being bound has not run yet.
    s.pending = true;
  } else if (ref.kind == Kind::kFinished) {
    const FinishedJob& f = snapshot_.finished[ref.index];
    s.completed = true;
    s.ok = f.state == slurm::JobState::kCompleted && f.exitCode == 0;
    s.specialExit = f.state == slurm::JobState::kSpecialExit;
    s.started = f.startTime != 0 ? f.startTime : f.endTime;
  } else {
    const Job& j = snapshot_.jobs[ref.index];
    s.pending = j.phase == JobPhase::kPending;
    s.started = j.phase == JobPhase::kRunning ? j.startTime : 0;
  }
  return s;
}

// A whole array (test_job_array_complete/completed/pending): ok when every task completed OK,
// completed when every task ended, pending while any task waits.
JobDirectory::Status JobDirectory::arrayStatus(JobId arrayId) const {
  Status all;
  auto it = byArray_.find(arrayId);
  if (it == byArray_.end()) return all;
  all.found = true;
  all.completed = true;
  all.ok = true;
  for (const Ref& ref : it->second) {
    const Status s = statusOf(ref);
    all.pending = all.pending || s.pending;
    all.completed = all.completed && s.completed;
    all.ok = all.ok && s.ok;
    all.specialExit = all.specialExit || s.specialExit;
    if (s.started != 0 && (all.started == 0 || s.started < all.started)) all.started = s.started;
  }
  return all;
}

JobDirectory::Status JobDirectory::taskStatus(JobId arrayId, std::uint32_t task) const {
  auto it = byArray_.find(arrayId);
  if (it == byArray_.end()) return {};
  for (const Ref& ref : it->second) {
    const auto& id = ref.kind == Kind::kFinished    ? snapshot_.finished[ref.index].arrayTaskId
                     : ref.kind == Kind::kUnplanned ? snapshot_.unplanned[ref.index].arrayTaskId
                                                    : snapshot_.jobs[ref.index].arrayTaskId;
    if (id && *id == task) return statusOf(ref);
  }
  return {};
}

JobDirectory::Status JobDirectory::targetStatus(const slurm::DependencyTarget& target) const {
  if (target.arrayTask && *target.arrayTask >= 0) {
    return taskStatus(target.jobId, static_cast<std::uint32_t>(*target.arrayTask));
  }
  if (target.arrayTask || byArray_.contains(target.jobId)) return arrayStatus(target.jobId);
  auto it = byId_.find(target.jobId);
  return it == byId_.end() ? Status{} : statusOf(it->second);
}

// Slurm's _find_singleton_job: another job of the same user and name that is running, or
// pending and submitted earlier (a lower id).
JobDirectory::Outcome JobDirectory::singleton(const Job& self) const {
  auto it = byName_.find(nameKey(self));
  if (it == byName_.end()) return Outcome::kFulfilled;
  const NameGroup& g = it->second;
  const bool runningOther = g.running && self.phase != JobPhase::kRunning;
  const bool earlierPending = g.anyPending && g.lowestPending < self.id;
  return runningOther || earlierPending ? Outcome::kWaiting : Outcome::kFulfilled;
}

JobDirectory::Outcome JobDirectory::outcome(slurm::DependencyType type,
                                            const slurm::DependencyTarget& target, const Job& self,
                                            Time now) const {
  using slurm::DependencyType;
  if (type == DependencyType::kSingleton) return singleton(self);
  Status s = targetStatus(target);
  if (type == DependencyType::kAfterCorr && self.arrayTaskId && !target.arrayTask) {
    const Status task = taskStatus(target.jobId, *self.arrayTaskId);
    if (task.found) s = task;
  }
  if (!s.found) return Outcome::kFulfilled;  // job is gone, dependency lifted
  switch (type) {
    case DependencyType::kAfter: {
      if (s.pending) return Outcome::kWaiting;
      const Duration delay = static_cast<Duration>(target.delayMinutes) * kSecondsPerMinute;
      return delay == 0 || (s.started != 0 && now - s.started >= delay) ? Outcome::kFulfilled
                                                                        : Outcome::kWaiting;
    }
    case DependencyType::kAfterAny:
      return s.completed ? Outcome::kFulfilled : Outcome::kWaiting;
    case DependencyType::kAfterNotOk:
      if (s.specialExit) return Outcome::kFulfilled;
      if (!s.completed) return Outcome::kWaiting;
      return s.ok ? Outcome::kFailed : Outcome::kFulfilled;
    case DependencyType::kAfterOk:
    case DependencyType::kAfterCorr:
      if (!s.completed) return Outcome::kWaiting;
      return s.ok ? Outcome::kFulfilled : Outcome::kFailed;
    case DependencyType::kSingleton:
      break;
  }
  return Outcome::kFulfilled;
}

DependencyState JobDirectory::evaluate(const slurm::DependencySpec& spec, const Job& self, Time now,
                                       std::vector<slurm::DependencyState>* states) const {
  bool anyFulfilled = false;
  bool anyFailed = false;
  bool anyWaiting = false;
  auto record = [&](Outcome o) {
    anyFulfilled = anyFulfilled || o == Outcome::kFulfilled;
    anyFailed = anyFailed || o == Outcome::kFailed;
    anyWaiting = anyWaiting || o == Outcome::kWaiting;
    if (states == nullptr) return;
    states->push_back(o == Outcome::kFulfilled ? slurm::DependencyState::kFulfilled
                      : o == Outcome::kFailed  ? slurm::DependencyState::kFailed
                                               : slurm::DependencyState::kUnfulfilled);
  };
  for (const slurm::DependencyTerm& term : spec.terms) {
    if (term.type == slurm::DependencyType::kSingleton || term.targets.empty()) {
      record(outcome(term.type, {}, self, now));
      continue;
    }
    for (const slurm::DependencyTarget& target : term.targets) {
      record(outcome(term.type, target, self, now));
    }
  }
  if (spec.anyOf) {
    if (anyFulfilled || (!anyWaiting && !anyFailed)) return DependencyState::kSatisfied;
    return anyWaiting ? DependencyState::kWaiting : DependencyState::kNeverSatisfied;
  }
  if (anyFailed) return DependencyState::kNeverSatisfied;
  return anyWaiting ? DependencyState::kWaiting : DependencyState::kSatisfied;
}

}  // namespace kubeslurm::core
