// The operator's Prometheus metrics: what the scheduler saw and did, for dashboards and alerts.
//
// prometheus-cpp stays behind a pimpl so that the controllers reporting here compile without its
// headers. Every method is safe to call from any thread, concurrently with a scrape.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

namespace kubeslurm::metrics {

// Cluster GPUs by what holds them, as the scheduler's snapshot saw them.
struct GpuCounts {
  std::int64_t total = 0;      // allocatable on nodes that are up
  std::int64_t allocated = 0;  // held by running SlurmJobs
  // Requested by pods kubeslurm does not manage (inference) or is tearing down.
  std::int64_t foreign = 0;
  std::int64_t free = 0;
  std::int64_t unavailable = 0;  // on nodes drained, down or not ready
};

// The accounting writer's figures since the operator started (controllers/accounting_writer.h).
struct AccountingFigures {
  std::uint64_t recordsWritten = 0;
  std::uint64_t batchesFailed = 0;
  std::int64_t queued = 0;
};

// Job counts by partition, then by a name: a Slurm job state, or a pending reason. The partition
// is the job's effective one: the partition it asked for (even one that does not exist), else
// the default partition's name ("" when it asked none and there is no default).
struct PartitionCounts {
  std::map<std::string, std::map<std::string, std::int64_t>> byPartition;

  void add(const std::string& partition, const std::string& name, std::int64_t n = 1) {
    byPartition[partition][name] += n;
  }
  // Summed over the partitions: the cluster's counts by name (what sdiag and squeue total).
  std::map<std::string, std::int64_t> total() const {
    std::map<std::string, std::int64_t> sum;
    for (const auto& [partition, counts] : byPartition) {
      for (const auto& [name, n] : counts) sum[name] += n;
    }
    return sum;
  }
  // Implicit on purpose: code that wants the cluster's counts (the query API's statistics)
  // takes a CycleReport's counts as the by-name map they were before partitions.
  operator std::map<std::string, std::int64_t>() const { return total(); }
};

// One partition's nodes and jobs, as Partition status counts them.
struct PartitionFigures {
  GpuCounts gpus;  // `total` unused: allocated + foreign + free
  std::int64_t pendingJobs = 0;
  std::int64_t runningJobs = 0;
};

// One account's row of sshare.
struct AccountFigures {
  double fairShare = 0;  // the factor in [0, 1]
  double usage = 0;      // decayed billing-weighted GPU-seconds
  double shares = 0;     // normalized shares of its parent, in [0, 1]
  // Its pending jobs that wait only for their turn (reason Priority or Resources): a starved
  // account has some, an idle one none.
  std::int64_t waitingJobs = 0;
};

// One scheduling cycle. The counts are those of core::CycleStats (sdiag's meaning).
struct CycleSample {
  double seconds = 0;      // the whole cycle (snapshot, plan, writes)
  double planSeconds = 0;  // core::plan alone
  std::uint32_t jobsConsidered = 0;
  std::uint32_t jobsStarted = 0;     // all starts, backfilled ones included
  std::uint32_t jobsBackfilled = 0;  // of jobsStarted, those started by the backfill pass
  std::uint32_t reservations = 0;    // backfill reservations held for blocked jobs
  std::uint32_t backfillDepth = 0;   // jobs the backfill pass tested
  bool budgetExhausted = false;
};

class OperatorMetrics {
 public:
  OperatorMetrics();
  ~OperatorMetrics();
  OperatorMetrics(const OperatorMetrics&) = delete;
  OperatorMetrics& operator=(const OperatorMetrics&) = delete;
  OperatorMetrics(OperatorMetrics&&) = delete;
  OperatorMetrics& operator=(OperatorMetrics&&) = delete;

  // Gauges replaced whole each cycle: a label value (or a partition and label value) missing
  // from the map is removed from the family, so that a state or reason that disappeared does
  // not linger at its last value.
  // By partition and Slurm state name; by partition and pending reason.
  void setJobs(const PartitionCounts& byState);
  void setPendingReasons(const PartitionCounts& byReason);
  void setNodes(const std::map<std::string, std::int64_t>& byState);  // idle, mixed, drain...
  void setGpus(const GpuCounts& gpus);
  void setAccounts(const std::map<std::string, AccountFigures>& accounts);
  void setPartitions(const std::map<std::string, PartitionFigures>& partitions);
  // A job's gang started after waiting `seconds` since its submission.
  void observeQueueWait(const std::string& partition, double seconds);
  void setLeader(bool leader);

  void observeCycle(const CycleSample& sample);
  void addGangAdmission(bool ok, double seconds);  // ok: bound; not ok: rolled back
  void addJobTransition(const std::string& state);
  void addJobIdsAssigned(std::int64_t n);
  void addApiError(const std::string& verb);
  // GPU-seconds held since the last call, by (account, user).
  void addGpuSeconds(const std::map<std::pair<std::string, std::string>, double>& byAccountAndUser);
  // The writer's running totals: the counters move by what they grew since the last call.
  void setAccounting(const AccountingFigures& figures);

  // For the exposer: really a std::shared_ptr<prometheus::Registry>, opaque so that includers
  // need no prometheus headers.
  std::shared_ptr<void> registry() const;
  // The text exposition of everything registered (what /metrics serves), for tests and for
  // `kubeslurm-operator --dump-metrics`.
  std::string exposition() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kubeslurm::metrics
