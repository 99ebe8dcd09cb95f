// Earliest start of a job in the backfill profile (Slurm's sched/backfill, doc/html/
// sched_config.shtml and backfill.c): the first grid point within bf_window at which enough nodes
// fit the job for its whole time limit, placed there as the main pass would place it now
// (topology, gang size, --switches, -w), its start then pulled back to the exact moment the
// chosen nodes all became available (squeue --start shows the running job's end time to the
// second).
//
// Cost per job: one pass over the partition's nodes turning each node's start intervals into
// +1/-1 marks on the slot grid, one sweep of the grid, and a placement at the first slot where
// the counts say it can fit; placement is retried only at slots where the counts changed.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kubeslurm/core/cluster_state.h"
#include "kubeslurm/core/job_view.h"
#include "kubeslurm/core/placement.h"
#include "kubeslurm/core/profile.h"

namespace kubeslurm::core {

// Shapes of plain jobs that found no start since the profile last changed: a job needing at least
// as much of everything (same partition, nodes, per-node request, time limit) cannot start either,
// so backfill skips it without a search, as Slurm skips jobs equivalent to one that just failed.
class FailedShapes {
 public:
  // Whether a recorded failure covers this job (for a start now, or anywhere in the window).
  bool covers(const JobView& job, bool nowOnly) const;
  void add(const JobView& job, bool wholeWindow);
  void clear() { shapes_.clear(); }

 private:
  struct Shape {
    std::uint32_t partition;
    NodeRequest request;
    std::uint32_t nodes;
    Duration duration;
    bool wholeWindow;
  };
  static constexpr std::size_t kMaxShapes = 64;
  std::vector<Shape> shapes_;
};

class Backfiller {
 public:
  Backfiller(const ClusterState& state, Profile& profile);

  // The earliest start (now, or a later time within the window) and its nodes in rank order.
  // With nowOnly, only now is tried. False when the job does not fit within the window.
  bool earliestStart(const JobView& job, bool nowOnly, Time& start, std::vector<NodeIndex>& nodes);
  // Holds the job's nodes from `start` for its time limit.
  void hold(const JobView& job, Time start, std::span<const NodeIndex> nodes);

 private:
  bool placeAt(const JobView& job, Time at, std::vector<NodeIndex>& nodes);
  std::uint32_t groupOf(const JobView& job, NodeIndex n) const;
  bool switchesBind(const JobView& job) const;
  std::uint32_t groupCount(const JobView& job) const;
  void markStarts(const JobView& job, std::uint32_t groups);
  bool countsAllow(const JobView& job, std::uint32_t groups, std::int64_t requiredReady);
  Time exactStart(const JobView& job, Time slot, std::span<const NodeIndex> nodes) const;

  const ClusterState& state_;
  Profile& profile_;
  LeafChooser chooser_;
  PlacementScratch scratch_;
  std::vector<std::int32_t>
      marks_;  // per (group, slot): +1 where a node becomes usable, -1 where not
  std::vector<std::int32_t> requiredMarks_;  // per slot, required nodes only
  std::vector<std::int64_t> counts_;         // per group during the sweep
  std::vector<std::int64_t> sorted_;         // scratch for --switches
};

}  // namespace kubeslurm::core
