// Preemption (doc/html/preempt.shtml), by partition priority tier (preempt/partition_prio: a job
// that cannot start may take the nodes of running jobs whose partition has a lower PriorityTier
// and a PreemptMode other than OFF) or by QOS (preempt/qos: of running jobs whose QOS is in the
// Preempt= list of the job's QOS, the victim QOS's PreemptMode, else slurm.conf's).
//
// Victims are whole jobs (a gang is released whole or not at all), youngest first, and as few as
// will do: the shortest youngest-first prefix of the candidates that lets the job be placed
// (found by bisection, since freeing more never hurts), then each chosen victim, oldest first,
// is spared if the job still fits without it. Foreign load is not a job and is never a victim.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kubeslurm/core/accounting_policy.h"
#include "kubeslurm/core/cluster_state.h"
#include "kubeslurm/core/job_view.h"
#include "kubeslurm/core/placement.h"

namespace kubeslurm::core {

struct PreemptionChoice {
  std::vector<std::uint32_t> victims;  // indices into Snapshot::jobs
  std::vector<NodeIndex> nodes;        // where the preemptor goes once they are gone
};

class PreemptionFinder {
 public:
  // `qos` set: preempt/qos with its QOS table; nullptr: preempt/partition_prio.
  PreemptionFinder(const ClusterState& state, Placer& placer, const AccountingPolicy* qos);

  // `taken[j]` marks running jobs already promised as victims this cycle.
  bool find(const JobView& job, std::span<const std::uint8_t> taken, PreemptionChoice& out);

  // How the victim is preempted: its partition's PreemptMode (preempt/qos: its QOS's, else the
  // cluster's), REQUEUE becoming CANCEL for a job that may not be requeued.
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
  const AccountingPolicy* qos_;
  std::vector<std::uint32_t> releaseStart_;  // CSR: each running job's releases
  std::vector<std::uint32_t> releaseList_;
  std::vector<NodeFree> scratchFree_;
};

}  // namespace kubeslurm::core
