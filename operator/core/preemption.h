// Preemption by partition priority tier (Slurm's preempt/partition_prio, doc/html/preempt.shtml):
// a job that cannot start may take the nodes of running jobs whose partition has a lower
// PriorityTier and a PreemptMode other than OFF.
//
// Victims are whole jobs (a gang is released whole or not at all), youngest first, and as few as
// will do: the shortest youngest-first prefix of the candidates that lets the job be placed
// (found by bisection, since freeing more never hurts), then each chosen victim, oldest first,
// is spared if the job still fits without it. Foreign load is not a job and is never a victim.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "operator/core/cluster_state.h"
#include "operator/core/job_view.h"
#include "operator/core/placement.h"

namespace kubeslurm::core {

struct PreemptionChoice {
  std::vector<std::uint32_t> victims;  // indices into Snapshot::jobs
  std::vector<NodeIndex> nodes;        // where the preemptor goes once they are gone
};

class PreemptionFinder {
 public:
  PreemptionFinder(const ClusterState& state, Placer& placer);

  // `taken[j]` marks running jobs already promised as victims this cycle.
  bool find(const JobView& job, std::span<const std::uint8_t> taken, PreemptionChoice& out);

  // How the victim is preempted: its partition's PreemptMode, REQUEUE becoming CANCEL for a job
  // that may not be requeued.
  PreemptMode modeFor(std::uint32_t victim) const;

 private:
  std::vector<std::uint32_t> candidates(const JobView& job,
                                        std::span<const std::uint8_t> taken) const;
  bool fitsWithout(const JobView& job, std::span<const std::uint32_t> victims,
                   std::vector<NodeIndex>& nodes);
  std::uint32_t tierOf(std::uint32_t jobIndex) const;
  const Partition* partitionOf(std::uint32_t jobIndex) const;

  const ClusterState& state_;
  Placer& placer_;
  std::vector<std::uint32_t> releaseStart_;  // CSR: each running job's releases
  std::vector<std::uint32_t> releaseList_;
  std::vector<NodeFree> scratchFree_;
};

}  // namespace kubeslurm::core
