#include "kubeslurm/core/scheduler.h"

#include <algorithm>
#include <limits>
#include <string>

#include "kubeslurm/core/backfill.h"
#include "kubeslurm/core/job_view.h"
#include "kubeslurm/core/profile.h"
#include "kubeslurm/slurm/hostlist.h"

namespace kubeslurm::core {

namespace {

using slurm::PendingReason;

Verdict waiting(PendingReason reason, bool accruing = true) {
  Verdict v;
  v.reason = reason;
  v.accruing = accruing;
  return v;
}

// Cycle::taken_ values.
constexpr std::uint8_t kStarted = 1;
constexpr std::uint8_t kPreempting = 2;

Time endOf(Time start, Duration duration) {
  return duration >= kUnlimited ? kUnlimited : start + duration;
}

}  // namespace

Cycle::Cycle(const Snapshot& snapshot, Time now, const Budget& budget)
    : snapshot_(snapshot),
      now_(now),
      budget_(budget),
      state_(snapshot, now),
      index_(state_),
      placer_(state_, index_),
      fairShare_(snapshot.accounts, snapshot.config.priority.fairTree),
      policy_(snapshot, fairShare_),
      failedPartition_(snapshot.partitions.size(), 0),
      victim_(snapshot.jobs.size(), 0),
      taken_(snapshot.jobs.size(), 0) {}

Plan Cycle::run() {
  examine();
  order();
  mainPass();
  if (snapshot_.config.policy == SchedulingPolicy::kBackfill) backfillPass();
  report();
  return std::move(plan_);
}

// ---------------------------------------------------------------------------------------------
// Examine

PriorityContext Cycle::priorityContext() const {
  PriorityContext c;
  c.config = &snapshot_.config.priority;
  c.clusterNodes = snapshot_.nodes.size();
  c.clusterCpuMillis = state_.clusterCpuMillis();
  for (const Partition& p : snapshot_.partitions) {
    c.maxPartitionFactor = std::max(c.maxPartitionFactor, p.priorityJobFactor);
  }
  c.maxQosPriority = snapshot_.config.priority.maxQosPriority;
  if (c.maxQosPriority == 0 && policy_.qosDefined()) {
    for (const Qos& q : snapshot_.qos) c.maxQosPriority = std::max(c.maxQosPriority, q.priority);
  } else if (c.maxQosPriority == 0) {
    for (const Job& j : snapshot_.jobs)
      c.maxQosPriority = std::max(c.maxQosPriority, j.qosPriority);
  }
  return c;
}

bool Cycle::arrayLimited(const Job& job) const {
  if (!job.arrayJobId || !job.arrayMaxRunning) return false;
  auto it = arrayRunning_.find(*job.arrayJobId);
  return it != arrayRunning_.end() && it->second >= *job.arrayMaxRunning;
}

Verdict Cycle::staticVerdict(const Job& job, const std::optional<std::uint32_t>& partition) const {
  if (job.held) return waiting(PendingReason::kJobHeldUser, false);
  if (job.adminPriority && *job.adminPriority == 0) {
    return waiting(PendingReason::kJobHeldAdmin, false);
  }
  if (job.dependency && !job.dependency->terms.empty() && directory_) {
    std::vector<slurm::DependencyState> states;
    const DependencyState state = directory_->evaluate(*job.dependency, job, now_, &states);
    if (state != DependencyState::kSatisfied) {
      Verdict v = waiting(state == DependencyState::kNeverSatisfied
                              ? PendingReason::kDependencyNeverSatisfied
                              : PendingReason::kDependency,
                          false);
      v.dependencyStates = std::move(states);
      return v;
    }
  }
  if (arrayLimited(job)) return waiting(PendingReason::kJobArrayTaskLimit);
  if (job.beginTime > now_) return waiting(PendingReason::kBeginTime, false);
  if (policy_.qosDefined() && policy_.qosOf(job) == nullptr) {
    return waiting(PendingReason::kInvalidQOS);
  }
  if (!partition) return waiting(PendingReason::kPartitionConfig);
  return partitionVerdict(job, *partition);
}

// job_limits_check: the partition's limits first, then its state.
Verdict Cycle::partitionVerdict(const Job& job, std::uint32_t p) const {
  const Partition& part = snapshot_.partitions[p];
  if (!job.timeLimitFromPartition && job.timeLimit > part.maxTime) {
    return waiting(PendingReason::kPartitionTimeLimit);
  }
  const std::uint32_t nodes = std::max<std::uint32_t>(job.minNodes, 1);
  if ((part.maxNodesPerJob && nodes > *part.maxNodesPerJob) ||
      nodes > state_.partition(p).nodes.size()) {
    return waiting(PendingReason::kPartitionNodeLimit);
  }
  if (!part.allowedAccounts.empty() &&
      std::find(part.allowedAccounts.begin(), part.allowedAccounts.end(), job.account) ==
          part.allowedAccounts.end()) {
    return waiting(PendingReason::kAccountNotAllowed);
  }
  // _valid_pn_min_mem, last of job_limits_check's tests. A job that takes all of each node's
  // memory (no --mem and no default: pn_min_memory 0) is measured by the partition's first node
  // (_mem_per_node_part): past MaxMemPerNode, it waits for good, as on Slurm.
  if (part.maxMemoryBytesPerNode) {
    std::uint64_t memory = job.perNodeAllocationIn(part.name).memoryBytes;
    if (job.allNodeMemoryIn(part.name) && !part.nodes.empty() &&
        part.nodes.front() < snapshot_.nodes.size()) {
      memory = snapshot_.nodes[part.nodes.front()].allocatable.memoryBytes;
    }
    if (memory > *part.maxMemoryBytesPerNode) return waiting(PendingReason::kMaxMemPerLimit);
  }
  if (part.state == PartitionState::kDown) return waiting(PendingReason::kPartitionDown);
  if (part.state == PartitionState::kInactive) return waiting(PendingReason::kPartitionInactive);
  if (!fairShare_.empty() && !fairShare_.associationOf(job.account, job.user)) {
    return waiting(PendingReason::kInvalidAccount);
  }
  return {};
}

// -w naming nodes that cannot take work: "ReqNodeNotAvail, UnavailableNodes:gpu-node-007".
Verdict Cycle::nodeVerdict(const JobView& view) const {
  std::vector<std::string> unavailable = view.unknownRequired;
  const PartitionInfo& partition = state_.partition(view.partition);
  for (NodeIndex n : view.required) {
    if (!state_.isUp(n) || !partition.contains(n)) unavailable.push_back(snapshot_.nodes[n].name);
  }
  if (unavailable.empty()) return {};
  Verdict v = waiting(PendingReason::kReqNodeNotAvail);
  v.detail = "UnavailableNodes:" + slurm::compressHostlist(unavailable);
  return v;
}

void Cycle::examine() {
  const PriorityContext context = priorityContext();
  if (std::any_of(snapshot_.jobs.begin(), snapshot_.jobs.end(), [](const Job& j) {
        return j.phase == JobPhase::kPending && j.dependency && !j.dependency->terms.empty();
      })) {
    directory_.emplace(snapshot_);
  }
  for (const Job& j : snapshot_.jobs) {
    if (j.phase == JobPhase::kRunning && j.arrayJobId) ++arrayRunning_[*j.arrayJobId];
  }
  for (const UnplannedJob& u : snapshot_.unplanned) {
    if (u.starting && u.arrayJobId) ++arrayRunning_[*u.arrayJobId];
  }
  for (std::uint32_t j = 0; j < snapshot_.jobs.size(); ++j) {
    const Job& job = snapshot_.jobs[j];
    if (job.phase != JobPhase::kPending) continue;
    examinePartition(j, job.partition, context);
    for (const std::string& other : job.otherPartitions) {
      if (other == job.partition) continue;
      examinePartition(j, other, context);
      multiPartition_ = true;
    }
  }
}

// A job with a matching OR is queued once per feature in each partition, in the order it names
// them: entries of one job and partition sort together (order's last tie-break), so the first
// feature whose nodes can take it now wins, as node_scheduler.c's walk over the features does.
void Cycle::examinePartition(std::uint32_t j, const std::string& partitionName,
                             const PriorityContext& context) {
  const Job& job = snapshot_.jobs[j];
  if (job.matchingOneOf.empty()) {
    examineEntry(j, partitionName, context, -1);
    return;
  }
  multiPartition_ = true;
  const auto alternatives = static_cast<std::int32_t>(job.matchingOneOf.size());
  for (std::int32_t a = 0; a < alternatives; ++a) {
    examineEntry(j, partitionName, context, a);
    pending_.back().moreAlternatives = a + 1 < alternatives;
  }
}

// A job of several partitions is queued once per partition, each with that partition's
// priority and limits (job_scheduler.c builds one job_queue record per part_ptr_list entry).
void Cycle::examineEntry(std::uint32_t j, const std::string& partitionName,
                         const PriorityContext& context, std::int32_t matching) {
  const Job& job = snapshot_.jobs[j];
  PendingJob p;
  p.job = j;
  p.partition = state_.partitionIndex(partitionName);
  const Partition* partition = p.partition ? &snapshot_.partitions[*p.partition] : nullptr;
  p.tier = partition != nullptr ? partition->priorityTier : 0;
  p.verdict = staticVerdict(job, p.partition);
  if (p.verdict.reason == PendingReason::kNone) {
    p.view = makeJobView(state_, j, *p.partition, now_, matching);
    p.verdict = nodeVerdict(p.view);
  }
  PriorityInputs inputs;
  inputs.partition = partition;
  inputs.partitionGpus = p.partition ? state_.partition(*p.partition).totalGpus : 0;
  if (auto assoc = fairShare_.associationOf(job.account, job.user)) {
    inputs.fairShare = fairShare_.factor(*assoc);
  }
  const Qos* qos = policy_.qosOf(job);
  inputs.qosPriority = qos != nullptr ? qos->priority : job.qosPriority;
  inputs.accruing = p.verdict.accruing;
  p.factors = computePriority(job, inputs, context, now_);
  if (job.held) p.factors.priority = 0;  // priority 0 is how Slurm holds a job
  pending_.push_back(std::move(p));
}

// sort_job_queue2: partition PriorityTier, then priority; then submit time and id (FIFO ties).
void Cycle::order() {
  order_.resize(pending_.size());
  for (std::uint32_t i = 0; i < order_.size(); ++i) order_[i] = i;
  const bool fifo = snapshot_.config.policy == SchedulingPolicy::kFifo;
  std::sort(order_.begin(), order_.end(), [&](std::uint32_t a, std::uint32_t b) {
    const PendingJob& x = pending_[a];
    const PendingJob& y = pending_[b];
    if (!fifo) {
      if (x.tier != y.tier) return x.tier > y.tier;
      if (x.factors.priority != y.factors.priority) return x.factors.priority > y.factors.priority;
    }
    const Job& jx = snapshot_.jobs[x.job];
    const Job& jy = snapshot_.jobs[y.job];
    if (jx.submitTime != jy.submitTime) return jx.submitTime < jy.submitTime;
    if (jx.id != jy.id) return jx.id < jy.id;
    return a < b;  // one job's partitions, in the order it named them
  });
}

// ---------------------------------------------------------------------------------------------
// Main pass

void Cycle::mainPass() {
  for (std::uint32_t i : order_) {
    PendingJob& p = pending_[i];
    if (p.verdict.reason != PendingReason::kNone || taken_[p.job] != 0) continue;
    ++plan_.stats.jobsConsidered;
    mainPassJob(p);
    if (p.preempting) preemptors_.push_back(i);
  }
}

void Cycle::mainPassJob(PendingJob& p) {
  const std::uint32_t partition = *p.partition;
  if (arrayLimited(snapshot_.jobs[p.job])) {
    p.verdict.reason = PendingReason::kJobArrayTaskLimit;
    return;
  }
  if (failedPartition_[partition] != 0) {
    p.verdict.reason = PendingReason::kPriority;
    return;
  }
  if (const PendingReason r = policy_.preSelect(snapshot_.jobs[p.job]); r != PendingReason::kNone) {
    p.verdict.reason = r;
    return;
  }
  if (placer_.placeNow(p.view, nodes_)) {
    if (!limited(p, nodes_.size())) start(p, nodes_, false);
    return;
  }
  const bool feasible = configFeasible(p.view);
  p.verdict.reason = feasible ? PendingReason::kResources : PendingReason::kBadConstraints;
  // Another of its matching-OR features may fit: the job's last entry here decides for it, and
  // the job waits for resources (blocking the partition) if any of its features could ever fit.
  if (p.moreAlternatives) return;
  if (!feasible && !earlierAlternativeWaits(p)) return;
  if (p.view.required.size() >= p.view.minNodes) {
    // Do not schedule more jobs on the nodes this job requires, but do not block the partition.
    for (NodeIndex n : p.view.required) index_.close(n);
    return;
  }
  if (snapshot_.config.preemption) tryPreempt(p);
  if (snapshot_.config.policy == SchedulingPolicy::kFifo) {
    for (std::uint32_t q = 0; q < snapshot_.partitions.size(); ++q) closePartition(q);
  } else {
    closePartition(partition);
  }
}

// Whether an earlier matching-OR entry of the job in the same partition waits for resources:
// examinePartition queues a job's features one after another.
bool Cycle::earlierAlternativeWaits(const PendingJob& p) const {
  if (p.view.matching <= 0) return false;
  const auto at = static_cast<std::size_t>(&p - pending_.data());
  for (std::size_t back = 1; back <= static_cast<std::size_t>(p.view.matching) && back <= at;
       ++back) {
    if (pending_[at - back].verdict.reason == PendingReason::kResources) return true;
  }
  return false;
}

// The limits that hold back a job about to start on `nodes` nodes (post-select): it does not
// start, and its partition stays open.
bool Cycle::limited(PendingJob& p, std::uint64_t nodes) {
  const PendingReason r = policy_.postSelect(snapshot_.jobs[p.job], nodes);
  if (r == PendingReason::kNone) return false;
  p.verdict.reason = r;
  return true;
}

bool Cycle::tryPreempt(PendingJob& p) {
  const Job& job = snapshot_.jobs[p.job];
  const bool byQos = snapshot_.config.preemptType == PreemptType::kQos;
  bool possible = false;
  if (byQos) {
    const Qos* qos = policy_.qosOf(job);
    possible = qos != nullptr && !qos->preempt.empty();
  } else {  // only jobs above some preemptable partition's tier can preempt anything
    possible = std::any_of(snapshot_.partitions.begin(), snapshot_.partitions.end(),
                           [&](const Partition& q) {
                             return q.priorityTier < p.tier && q.preemptMode != PreemptMode::kOff;
                           });
  }
  // Freeing nodes for a job its limits would hold back anyway helps nobody.
  if (!possible || policy_.postSelect(job, p.view.minNodes) != PendingReason::kNone) return false;
  if (!preemption_) preemption_.emplace(state_, placer_, byQos ? &policy_ : nullptr);
  PreemptionChoice choice;
  if (!preemption_->find(p.view, victim_, choice)) return false;
  const JobId preemptor = snapshot_.jobs[p.job].id;
  for (std::uint32_t v : choice.victims) {
    victim_[v] = 1;
    plan_.preemptions.push_back({snapshot_.jobs[v].id, preemptor, preemption_->modeFor(v)});
  }
  for (NodeIndex n : choice.nodes) index_.close(n);
  p.preempting = true;
  taken_[p.job] = kPreempting;
  p.estimatedStart = now_;
  p.estimatedNodes = std::move(choice.nodes);
  return true;
}

// Slurm: "Do not schedule more jobs in this partition or on nodes in this partition".
void Cycle::closePartition(std::uint32_t partition) {
  if (failedPartition_[partition] != 0) return;
  failedPartition_[partition] = 1;
  for (NodeIndex n : state_.partition(partition).nodes) index_.close(n);
}

// Whether the partition could ever hold the job: enough nodes whose allocatable covers a rank
// and that the job may use (features, -x, taints), whatever their state and load. A job that
// fails this is BadConstraints and must not block the partition.
bool Cycle::configFeasible(const JobView& view) const {
  const Job& job = snapshot_.jobs[view.job];
  std::uint32_t count = 0;
  for (NodeIndex n : state_.partition(view.partition).nodes) {
    const Node& node = snapshot_.nodes[n];
    if (!toAmount(node.allocatable).covers(view.request.amount)) continue;
    if (!view.simple && (!toleratesAll(node.taints, job.tolerations,
                                       snapshot_.partitions[view.partition].tolerations) ||
                         std::binary_search(view.excluded.begin(), view.excluded.end(), n) ||
                         !hasViewFeatures(node, job, view))) {
      continue;
    }
    if (++count >= view.minNodes) return true;
  }
  return false;
}

void Cycle::start(PendingJob& p, const std::vector<NodeIndex>& nodes, bool backfilled) {
  const Job& job = snapshot_.jobs[p.job];
  const Time end = endOf(now_, p.view.duration);
  for (NodeIndex n : nodes) {
    state_.addRelease({n, end, state_.takenBy(n, p.view.request), p.job});
  }
  placer_.commit(p.view, nodes);
  policy_.charge(job, nodes.size());
  plan_.starts.push_back({job.id, nodes, backfilled, snapshot_.partitions[p.view.partition].name});
  if (backfilled) ++plan_.stats.jobsBackfilled;
  if (job.arrayJobId) ++arrayRunning_[*job.arrayJobId];
  taken_[p.job] = kStarted;
}

// ---------------------------------------------------------------------------------------------
// Backfill

void Cycle::backfillPass() {
  // Victims of this cycle's preemptions are gone just after now; their preemptors hold the
  // freed nodes from then on.
  std::vector<Release> releases = state_.releases();
  for (Release& r : releases) {
    if (r.job < victim_.size() && victim_[r.job] != 0) r.at = now_ + 1;
  }
  Profile profile(now_, budget_, state_.freeAll(), releases);
  Backfiller backfiller(state_, profile);
  for (std::uint32_t i : preemptors_) {
    backfiller.hold(pending_[i].view, now_ + 1, pending_[i].estimatedNodes);
  }
  FailedShapes failed;
  std::uint32_t tested = 0;
  // backfill.c: a job of several partitions that "already added a backfill reservation" tests
  // only an immediate start in the others.
  std::vector<std::uint8_t> reserved(multiPartition_ ? snapshot_.jobs.size() : 0, 0);
  for (std::uint32_t i : order_) {
    PendingJob& p = pending_[i];
    const PendingReason reason = p.verdict.reason;
    if (taken_[p.job] != 0 ||
        (reason != PendingReason::kResources && reason != PendingReason::kPriority)) {
      continue;
    }
    if (tested >= budget_.maxJobsTested) {
      plan_.stats.budgetExhausted = true;
      break;
    }
    if (budget_.deadline != nullptr && budget_.deadline->passed()) {
      plan_.stats.budgetExhausted = true;
      plan_.stats.deadlinePassed = true;
      break;
    }
    ++tested;
    if (arrayLimited(snapshot_.jobs[p.job])) {
      p.verdict.reason = PendingReason::kJobArrayTaskLimit;
      continue;
    }
    if (const PendingReason r = policy_.preSelect(snapshot_.jobs[p.job]);
        r != PendingReason::kNone) {
      p.verdict.reason = r;
      continue;
    }
    const bool nowOnly = plan_.stats.reservations >= budget_.maxReservations ||
                         (multiPartition_ && reserved[p.job] != 0);
    if (failed.covers(p.view, nowOnly)) continue;
    Time start = now_;
    if (!backfiller.earliestStart(p.view, nowOnly, start, nodes_)) {
      failed.add(p.view, !nowOnly);
      continue;
    }
    // backfill.c: no reservation for a job the limits hold back, even one that starts later.
    if (limited(p, nodes_.size())) continue;
    backfiller.hold(p.view, start, nodes_);
    failed.clear();
    if (start == now_) {
      this->start(p, nodes_, true);
    } else {
      p.estimatedStart = start;
      p.estimatedNodes = nodes_;
      ++plan_.stats.reservations;
      if (multiPartition_) reserved[p.job] = 1;
    }
  }
  plan_.stats.backfillDepth = tested;
}

// ---------------------------------------------------------------------------------------------
// Report

// Which entry of a job of several partitions speaks for it: the one that will start it (a
// preemptor, or the earliest reservation), else one competing for resources, else the first in
// queue order. Slurm's squeue shows the reason of whichever partition it tried last, which
// depends on its loop; the entry closest to starting is what a user can act on.
bool Cycle::betterReport(const PendingJob& candidate, const PendingJob& chosen) {
  if (candidate.preempting != chosen.preempting) return candidate.preempting;
  if (candidate.estimatedStart && chosen.estimatedStart) {
    return *candidate.estimatedStart < *chosen.estimatedStart;
  }
  if (candidate.estimatedStart || chosen.estimatedStart)
    return candidate.estimatedStart.has_value();
  auto competing = [](const PendingJob& p) {
    return p.verdict.reason == PendingReason::kResources ||
           p.verdict.reason == PendingReason::kPriority;
  };
  return competing(candidate) && !competing(chosen);
}

void Cycle::report() {
  // One decision per job, in queue order of its first entry: the entry that speaks for it.
  constexpr auto kNoEntry = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> chosen;
  std::vector<std::uint32_t> reportOrder;
  if (multiPartition_) chosen.assign(snapshot_.jobs.size(), kNoEntry);
  reportOrder.reserve(pending_.size());
  for (std::uint32_t i : order_) {
    const PendingJob& p = pending_[i];
    if (!multiPartition_) {
      reportOrder.push_back(i);
      continue;
    }
    std::uint32_t& c = chosen[p.job];
    if (c == kNoEntry) {
      reportOrder.push_back(i);
      c = i;
    } else if (betterReport(p, pending_[c])) {
      c = i;
    }
  }
  // Priorities go into the map in id order, each at its end: linear, not n log n. A job of
  // several partitions shows its first (highest) entry's.
  std::vector<std::pair<JobId, const PriorityFactors*>> byId;
  byId.reserve(reportOrder.size());
  for (std::uint32_t i : reportOrder) {
    byId.emplace_back(snapshot_.jobs[pending_[i].job].id, &pending_[i].factors);
  }
  std::sort(byId.begin(), byId.end());
  for (const auto& [id, factors] : byId)
    plan_.priorities.emplace_hint(plan_.priorities.end(), id, *factors);
  if (multiPartition_) {
    // pending_ is in examine order: each job's entries in the order it names its partitions.
    for (const PendingJob& p : pending_) {
      const Job& job = snapshot_.jobs[p.job];
      if (job.otherPartitions.empty() || !p.partition || taken_[p.job] == kStarted ||
          p.view.matching > 0) {
        continue;
      }
      plan_.partitionPriorities[job.id].push_back(
          PartitionPriority{snapshot_.partitions[*p.partition].name, p.factors});
    }
    std::erase_if(plan_.partitionPriorities,
                  [](const auto& entry) { return entry.second.size() < 2; });
  }
  plan_.pending.reserve(reportOrder.size() - std::min(reportOrder.size(), plan_.starts.size()));
  for (std::uint32_t first : reportOrder) {
    const std::uint32_t job = pending_[first].job;
    if (taken_[job] == kStarted) continue;
    PendingJob& p = pending_[multiPartition_ ? chosen[job] : first];
    PendingDecision d;
    d.jobId = snapshot_.jobs[job].id;
    d.reason = p.verdict.reason;
    d.reasonDetail = std::move(p.verdict.detail);
    d.estimatedStart = p.estimatedStart;
    d.estimatedNodes = std::move(p.estimatedNodes);
    if (p.partition) d.partition = snapshot_.partitions[*p.partition].name;
    d.dependencyStates = std::move(p.verdict.dependencyStates);
    plan_.pending.push_back(std::move(d));
  }
  plan_.fairShare = fairShare_.rows();
  plan_.stats.jobsStarted = static_cast<std::uint32_t>(plan_.starts.size());
}

Plan plan(const Snapshot& snapshot, Time now, const Budget& budget) {
  return Cycle(snapshot, now, budget).run();
}

}  // namespace kubeslurm::core
