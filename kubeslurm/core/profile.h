// The backfill availability profile: each node's free capacity as a step function of time.
//
//   free(n, t) = free now + releases of running jobs due by t - reservations active at t
//
// Running jobs end at startTime + timeLimit (what Slurm's backfill assumes); reservations are
// held for the blocked jobs by priority order. A job can start on node n at S when the node fits
// one rank throughout [S, S + timeLimit). Starts are only tried at the grid points
// now + k * resolution (k = 0 .. window / resolution), as bf_resolution does, and the exact start
// is then pulled back to the latest moment all the chosen nodes became available.
//
// Storage: one arena of steps, each node owning a contiguous run of it with a little spare room;
// a node that outgrows its run moves to the end of the arena (amortised, and only for nodes that
// get many reservations). Nothing is allocated per query.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "kubeslurm/core/cluster_state.h"

namespace kubeslurm::core {

inline constexpr Time kForever = std::numeric_limits<Time>::max() / 2;

class Profile {
 public:
  struct Step {
    Time at = 0;  // this free capacity holds from `at` until the next step
    NodeFree free;
  };

  Profile(Time now, const Budget& budget, std::span<const NodeFree> freeNow,
          std::span<const Release> releases);

  Time now() const { return now_; }
  // Grid points: k = 0 .. lastSlot(); slot k is the time now + k * resolution.
  std::uint32_t lastSlot() const { return lastSlot_; }
  Time slotTime(std::uint32_t k) const { return now_ + static_cast<Time>(k) * resolution_; }
  // The first grid point at or after t (0 for t <= now); may exceed lastSlot().
  std::uint64_t slotAtOrAfter(Time t) const;

  std::span<const Step> steps(NodeIndex n) const { return {steps_.data() + start_[n], length_[n]}; }

  // Calls emit(a, b) for each maximal interval [a, b) of start times S >= now such that the node
  // fits `request` throughout [S, S + duration). b may be kForever.
  template <class Emit>
  void forEachStartInterval(NodeIndex n, const NodeRequest& request, Duration duration,
                            Emit&& emit) const {
    Time candidate = now_;
    const std::span<const Step> s = steps(n);
    for (std::size_t i = 0; i < s.size(); ++i) {
      const Time end = i + 1 < s.size() ? s[i + 1].at : kForever;
      if (end <= now_ || fits(s[i].free, request)) continue;
      const Time badStart = std::max(s[i].at, now_);
      // Starts up to badStart - duration end before this step: [candidate, badStart - duration].
      if (badStart - duration >= candidate) emit(candidate, badStart - duration + 1);
      candidate = std::max(candidate, end);
      if (candidate >= kForever) return;
    }
    emit(candidate, kForever);
  }

  // Whether the node fits `request` throughout [start, start + duration), and if so the least
  // free capacity over that interval (the packing key).
  bool fitsThroughout(NodeIndex n, const NodeRequest& request, Time start, Duration duration,
                      Amount& leastFree) const {
    // Most nodes are rejected by their free capacity now, without touching the step arena.
    if (start <= now_ && !fits(head_[n], request)) return false;
    return fitsSteps(n, request, start, duration, leastFree);
  }

  // The start of the maximal start interval that contains `at` (which must be a valid start).
  Time intervalStartContaining(NodeIndex n, const NodeRequest& request, Duration duration,
                               Time at) const;

  // Holds `amount` (and one job) on node n over [from, to).
  void reserve(NodeIndex n, Time from, Time to, const Amount& amount);

 private:
  bool fitsSteps(NodeIndex n, const NodeRequest& request, Time start, Duration duration,
                 Amount& leastFree) const;
  std::size_t split(NodeIndex n, Time at);  // ensures a step starts at `at`; returns its offset
  void grow(NodeIndex n);

  Time now_;
  Duration resolution_;
  std::uint32_t lastSlot_;
  std::vector<Step> steps_;
  // Each node's first step (free capacity now), kept apart: compact, so that the common test
  // "does it fit now at all" does not touch the step arena.
  std::vector<NodeFree> head_;
  std::vector<std::uint32_t> start_;
  std::vector<std::uint32_t> length_;
  std::vector<std::uint32_t> capacity_;
};

}  // namespace kubeslurm::core
