#include "kubeslurm/core/preemption.h"

#include <algorithm>

namespace kubeslurm::core {

PreemptionFinder::PreemptionFinder(const ClusterState& state, Placer& placer,
                                   const AccountingPolicy* qos)
    : state_(state), placer_(placer), qos_(qos) {
  const std::size_t jobs = state.snapshot().jobs.size();
  releaseStart_.assign(jobs + 1, 0);
  const auto& releases = state.releases();
  for (const Release& r : releases) ++releaseStart_[r.job + 1];
  for (std::size_t j = 0; j < jobs; ++j) releaseStart_[j + 1] += releaseStart_[j];
  releaseList_.resize(releases.size());
  std::vector<std::uint32_t> cursor(releaseStart_.begin(), releaseStart_.end() - 1);
  for (std::size_t i = 0; i < releases.size(); ++i) {
    releaseList_[cursor[releases[i].job]++] = static_cast<std::uint32_t>(i);
  }
}

const Partition* PreemptionFinder::partitionOf(std::uint32_t jobIndex) const {
  const auto p = state_.partitionIndex(state_.snapshot().jobs[jobIndex].partition);
  return p ? &state_.snapshot().partitions[*p] : nullptr;
}

std::uint32_t PreemptionFinder::tierOf(std::uint32_t jobIndex) const {
  const Partition* p = partitionOf(jobIndex);
  return p != nullptr ? p->priorityTier : 0;
}

PreemptMode PreemptionFinder::modeFor(std::uint32_t victim) const {
  PreemptMode mode = PreemptMode::kOff;
  if (qos_ != nullptr) {
    const Qos* q = qos_->qosOf(state_.snapshot().jobs[victim]);
    mode = q != nullptr && q->preemptMode ? *q->preemptMode : state_.snapshot().config.preemptMode;
  } else if (const Partition* p = partitionOf(victim)) {
    mode = p->preemptMode;
  }
  if (mode == PreemptMode::kRequeue && !state_.snapshot().jobs[victim].requeue) {
    return PreemptMode::kCancel;
  }
  return mode;
}

// Running jobs of lower tiers (preempt/qos: of the QOS the job's QOS may preempt) that may be
// preempted and hold a node of the job's partition, youngest first (latest start, then highest
// id).
std::vector<std::uint32_t> PreemptionFinder::candidates(const JobView& job,
                                                        std::span<const std::uint8_t> taken) const {
  const auto& jobs = state_.snapshot().jobs;
  const std::uint32_t tier = state_.snapshot().partitions[job.partition].priorityTier;
  const PartitionInfo& partition = state_.partition(job.partition);
  std::vector<std::uint32_t> out;
  for (std::uint32_t j = 0; j < jobs.size(); ++j) {
    if (jobs[j].phase != JobPhase::kRunning || taken[j] != 0 || modeFor(j) == PreemptMode::kOff) {
      continue;
    }
    if (qos_ != nullptr ? !qos_->mayPreempt(jobs[job.job], jobs[j]) : tierOf(j) >= tier) continue;
    const auto& nodes = jobs[j].allocatedNodes;
    if (std::any_of(nodes.begin(), nodes.end(),
                    [&](NodeIndex n) { return n < state_.nodeCount() && partition.contains(n); })) {
      out.push_back(j);
    }
  }
  std::sort(out.begin(), out.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (jobs[a].startTime != jobs[b].startTime) return jobs[a].startTime > jobs[b].startTime;
    return jobs[a].id > jobs[b].id;
  });
  return out;
}

// Whether the job fits once `victims` have given back what they hold.
bool PreemptionFinder::fitsWithout(const JobView& job, std::span<const std::uint32_t> victims,
                                   std::vector<NodeIndex>& nodes) {
  const auto free = state_.freeAll();
  scratchFree_.assign(free.begin(), free.end());
  const auto& releases = state_.releases();
  for (std::uint32_t v : victims) {
    for (std::uint32_t i = releaseStart_[v]; i < releaseStart_[v + 1]; ++i) {
      const Release& r = releases[releaseList_[i]];
      scratchFree_[r.node].amount += r.amount;
      --scratchFree_[r.node].jobs;
    }
  }
  return placer_.placeWith(job, scratchFree_, nodes);
}

bool PreemptionFinder::find(const JobView& job, std::span<const std::uint8_t> taken,
                            PreemptionChoice& out) {
  std::vector<std::uint32_t> all = candidates(job, taken);
  std::vector<NodeIndex> nodes;
  if (all.empty() || !fitsWithout(job, all, nodes)) return false;
  // Shortest youngest-first prefix that suffices: feasibility only grows with the prefix.
  std::size_t lo = 1;
  std::size_t hi = all.size();
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (fitsWithout(job, std::span(all).first(mid), nodes)) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  std::vector<std::uint32_t> chosen(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(lo));
  // Spare every victim the job can do without, oldest first.
  for (std::size_t i = chosen.size(); i-- > 0;) {
    std::vector<std::uint32_t> without = chosen;
    without.erase(without.begin() + static_cast<std::ptrdiff_t>(i));
    if (!without.empty() && fitsWithout(job, without, nodes)) chosen = std::move(without);
  }
  if (!fitsWithout(job, chosen, out.nodes)) return false;
  out.victims = std::move(chosen);
  return true;
}

}  // namespace kubeslurm::core
