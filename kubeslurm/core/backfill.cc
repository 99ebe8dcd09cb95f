#include "kubeslurm/core/backfill.h"

#include <algorithm>
#include <functional>

namespace kubeslurm::core {

namespace {
Time endOf(Time start, Duration duration) {
  return duration >= kForever - start ? kForever : start + duration;
}
}  // namespace

bool FailedShapes::covers(const JobView& job, bool nowOnly) const {
  if (!job.simple || job.maxSwitches) return false;
  return std::any_of(shapes_.begin(), shapes_.end(), [&](const Shape& s) {
    return (nowOnly || s.wholeWindow) && s.partition == job.partition &&
           s.request.exclusive == job.request.exclusive &&
           job.request.amount.covers(s.request.amount) && job.minNodes >= s.nodes &&
           job.duration >= s.duration;
  });
}

void FailedShapes::add(const JobView& job, bool wholeWindow) {
  if (!job.simple || job.maxSwitches || shapes_.size() >= kMaxShapes) return;
  shapes_.push_back({job.partition, job.request, job.minNodes, job.duration, wholeWindow});
}

Backfiller::Backfiller(const ClusterState& state, Profile& profile)
    : state_(state), profile_(profile), chooser_(state.topology()) {}

// Counting groups: one for a single tree; one per tree when there are several (a job cannot span
// trees); one per leaf while --switches binds (the leaf counts decide whether N leaves suffice).
// Block topology ignores --switches (only eval_nodes_tree.c reads req_switch).
bool Backfiller::switchesBind(const JobView& job) const {
  return job.maxSwitches && !state_.topology().isBlock();
}

std::uint32_t Backfiller::groupCount(const JobView& job) const {
  const Topology& t = state_.topology();
  if (switchesBind(job)) return t.leafCount();
  return t.rootCount();
}

std::uint32_t Backfiller::groupOf(const JobView& job, NodeIndex n) const {
  const Topology& t = state_.topology();
  const std::uint32_t leaf = t.leafOf(n);
  return switchesBind(job) ? leaf : t.rootOfLeaf(leaf);
}

void Backfiller::markStarts(const JobView& job, std::uint32_t groups) {
  const std::size_t slots = static_cast<std::size_t>(profile_.lastSlot()) + 2;
  marks_.assign(slots * groups, 0);
  requiredMarks_.assign(job.required.empty() ? 0 : slots, 0);
  const std::uint64_t last = profile_.lastSlot();
  for (NodeIndex n : state_.partition(job.partition).nodes) {
    if (!nodeAllowed(state_, job, n)) continue;
    std::int32_t* row = marks_.data() + groupOf(job, n) * slots;
    const bool required = isRequired(job, n);
    profile_.forEachStartInterval(n, job.request, job.duration, [&](Time a, Time b) {
      const std::uint64_t from = profile_.slotAtOrAfter(a);
      if (from > last) return;
      const std::uint64_t to = std::min(profile_.slotAtOrAfter(b), last + 1);
      if (from >= to) return;
      ++row[from];
      --row[to];
      if (required) {
        ++requiredMarks_[from];
        --requiredMarks_[to];
      }
    });
  }
}

// Whether the usable-node counts at a slot allow the job at all: every required node usable, and
// enough nodes in one tree (or, under --switches=N, in the N fullest leaves).
bool Backfiller::countsAllow(const JobView& job, std::uint32_t groups, std::int64_t requiredReady) {
  if (requiredReady < static_cast<std::int64_t>(job.required.size())) return false;
  const auto need = static_cast<std::int64_t>(job.minNodes);
  if (!switchesBind(job)) {
    return std::any_of(counts_.begin(), counts_.begin() + groups,
                       [&](std::int64_t c) { return c >= need; });
  }
  std::vector<std::int64_t>& s = sorted_;
  s.assign(counts_.begin(), counts_.begin() + groups);
  const std::size_t n = std::min<std::size_t>(*job.maxSwitches, s.size());
  std::partial_sort(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(n), s.end(),
                    std::greater<>());
  std::int64_t best = 0;
  for (std::size_t i = 0; i < n; ++i) best += s[i];
  return best >= need;
}

bool Backfiller::earliestStart(const JobView& job, bool nowOnly, Time& start,
                               std::vector<NodeIndex>& nodes) {
  if (nowOnly) {
    start = profile_.now();
    return placeAt(job, start, nodes);
  }
  const std::uint32_t groups = groupCount(job);
  markStarts(job, groups);
  const std::size_t slots = static_cast<std::size_t>(profile_.lastSlot()) + 2;
  counts_.assign(groups, 0);
  std::int64_t requiredReady = 0;
  bool changed = true;
  for (std::uint32_t k = 0; k <= profile_.lastSlot(); ++k) {
    for (std::uint32_t g = 0; g < groups; ++g) {
      const std::int32_t d = marks_[g * slots + k];
      if (d != 0) {
        counts_[g] += d;
        changed = true;
      }
    }
    if (!requiredMarks_.empty()) requiredReady += requiredMarks_[k];
    if (!changed || !countsAllow(job, groups, requiredReady)) continue;
    const Time slot = profile_.slotTime(k);
    if (placeAt(job, slot, nodes)) {
      start = k == 0 ? profile_.now() : exactStart(job, slot, nodes);
      return true;
    }
    changed = false;  // placement fails until the counts move again
  }
  return false;
}

bool Backfiller::placeAt(const JobView& job, Time at, std::vector<NodeIndex>& nodes) {
  const PartitionInfo& partition = state_.partition(job.partition);
  auto fit = [&](NodeIndex n, Amount& free) {
    return profile_.fitsThroughout(n, job.request, at, job.duration, free) &&
           nodeAllowed(state_, job, n) && (job.required.empty() || partition.contains(n));
  };
  return placeJob(state_, job, chooser_, scratch_, false, fit, nodes);
}

// The latest of the chosen nodes' availability starts: from then on all of them fit.
Time Backfiller::exactStart(const JobView& job, Time slot, std::span<const NodeIndex> nodes) const {
  Time start = profile_.now();
  for (NodeIndex n : nodes) {
    start = std::max(start, profile_.intervalStartContaining(n, job.request, job.duration, slot));
  }
  return start;
}

void Backfiller::hold(const JobView& job, Time start, std::span<const NodeIndex> nodes) {
  const Time end = endOf(start, job.duration);
  for (NodeIndex n : nodes) profile_.reserve(n, start, end, state_.takenBy(n, job.request));
}

}  // namespace kubeslurm::core
