// One scheduling cycle: plan(snapshot, now, budget), in the steps Slurm's controller takes.
//
//   1. State      free capacity per node; the association tree and its fair-share factors.
//   2. Examine    each pending job, once per partition it names: priority factors, and whether
//                 it may run at all (held, dependency, begin time, QOS, partition limits and
//                 state, -w of unusable nodes).
//   3. Order      partition PriorityTier, then priority, then submit time, then job id.
//   4. Main pass  (job_scheduler.c _schedule) in that order: start what fits now. The first job
//                 of a partition that cannot start is Resources: it may preempt lower tiers, and
//                 its partition's nodes are closed to the rest of the pass, whose jobs there are
//                 Priority. A job whose -w nodes are busy closes only those nodes. A job that QOS
//                 or association limits hold back (accounting_policy.h) closes nothing.
//   5. Backfill   (sched/backfill) in the same order, up to Budget::maxJobsTested jobs: each job
//                 starts now if it fits without touching any reservation made so far, else gets
//                 a reservation at its earliest start (up to Budget::maxReservations), which is
//                 what squeue --start shows. A preemptor holds its nodes from the moment its
//                 victims are gone. Budget::deadline (bf_max_time) can end the pass early.
//   6. Report     starts, preemptions, reasons and estimates, priorities, sshare rows, stats.
//
// Nothing in a cycle is applied: the Plan is data for the controllers (plan, then apply).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "kubeslurm/core/accounting_policy.h"
#include "kubeslurm/core/capacity_index.h"
#include "kubeslurm/core/cluster_state.h"
#include "kubeslurm/core/eligibility.h"
#include "kubeslurm/core/job_view.h"
#include "kubeslurm/core/model.h"
#include "kubeslurm/core/placement.h"
#include "kubeslurm/core/preemption.h"
#include "kubeslurm/core/priority.h"

namespace kubeslurm::core {

class Cycle {
 public:
  Cycle(const Snapshot& snapshot, Time now, const Budget& budget);
  Plan run();

 private:
  // One per pending job and partition it names (sbatch -p a,b gives two).
  struct PendingJob {
    std::uint32_t job = 0;  // index into Snapshot::jobs
    std::optional<std::uint32_t> partition;
    std::uint32_t tier = 0;
    Verdict verdict;
    PriorityFactors factors;
    JobView view;
    bool preempting = false;
    // A matching-OR entry with more of the job's features after it in this partition: its
    // failure leaves the partition open for them (the job as a whole has not failed yet).
    bool moreAlternatives = false;
    std::optional<Time> estimatedStart;
    std::vector<NodeIndex> estimatedNodes;
  };

  void examine();
  void examinePartition(std::uint32_t job, const std::string& partition,
                        const PriorityContext& context);
  void examineEntry(std::uint32_t job, const std::string& partition, const PriorityContext& context,
                    std::int32_t matching);
  Verdict staticVerdict(const Job& job, const std::optional<std::uint32_t>& partition) const;
  Verdict partitionVerdict(const Job& job, std::uint32_t partition) const;
  Verdict nodeVerdict(const JobView& view) const;
  PriorityContext priorityContext() const;
  void order();
  void mainPass();
  void mainPassJob(PendingJob& p);
  bool tryPreempt(PendingJob& p);
  bool earlierAlternativeWaits(const PendingJob& p) const;
  void closePartition(std::uint32_t partition);
  void backfillPass();
  bool configFeasible(const JobView& view) const;
  bool arrayLimited(const Job& job) const;
  bool limited(PendingJob& p, std::uint64_t nodes);
  void start(PendingJob& p, const std::vector<NodeIndex>& nodes, bool backfilled);
  static bool betterReport(const PendingJob& candidate, const PendingJob& chosen);
  void report();

  const Snapshot& snapshot_;
  Time now_;
  Budget budget_;
  ClusterState state_;
  CapacityIndex index_;
  Placer placer_;
  std::optional<PreemptionFinder> preemption_;  // built on first need
  FairShareTree fairShare_;
  AccountingPolicy policy_;
  std::optional<JobDirectory> directory_;  // built when some job has a dependency
  std::vector<PendingJob> pending_;
  std::vector<std::uint32_t> order_;  // indices into pending_
  std::vector<std::uint8_t> failedPartition_;
  std::vector<std::uint8_t> victim_;  // per Snapshot::jobs
  // Per Snapshot::jobs: 0, or whether one of its entries started or is preempting (so its other
  // partitions' entries are skipped).
  std::vector<std::uint8_t> taken_;
  // Some job has several entries: it names several partitions, or a matching OR.
  bool multiPartition_ = false;
  std::unordered_map<JobId, std::uint32_t> arrayRunning_;
  std::vector<std::uint32_t> preemptors_;  // indices into pending_
  std::vector<NodeIndex> nodes_;           // scratch
  Plan plan_;
};

}  // namespace kubeslurm::core
