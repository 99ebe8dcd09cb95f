#include "kubeslurm/metrics/operator_metrics.h"

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

namespace kubeslurm::metrics {
namespace {

using prometheus::Counter;
using prometheus::Family;
using prometheus::Gauge;
using prometheus::Histogram;
using prometheus::Registry;

// A plan takes from about 100 µs (a handful of jobs) to seconds (a deep backfill queue); a cycle
// adds the API writes on top, so both share one range.
const Histogram::BucketBoundaries& cycleBuckets() {
  static const Histogram::BucketBoundaries kBuckets = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
      0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};
  return kBuckets;
}

// A gang admission is one bind per pod against the API server, so milliseconds to tens of seconds.
const Histogram::BucketBoundaries& gangBuckets() {
  static const Histogram::BucketBoundaries kBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                       0.5,   1,    2.5,   5,    10,  30};
  return kBuckets;
}

Family<Gauge>& gaugeFamily(Registry& registry, const std::string& name, const std::string& help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(registry);
}

Family<Counter>& counterFamily(Registry& registry, const std::string& name,
                               const std::string& help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry);
}

Family<Histogram>& histogramFamily(Registry& registry, const std::string& name,
                                   const std::string& help) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(registry);
}

// A gauge family keyed by one or more labels whose set of values is replaced whole: label
// values absent from the latest report are removed rather than left at a stale number.
class ReplacedGauges {
 public:
  // `fixed`: labels every gauge of this set carries besides `labels` (several sets may share a
  // family, one per value of a further label).
  ReplacedGauges(Family<Gauge>& family, std::vector<std::string> labels,
                 std::map<std::string, std::string> fixed = {})
      : family_(family), labels_(std::move(labels)), fixed_(std::move(fixed)) {}
  ReplacedGauges(Family<Gauge>& family, std::string label,
                 std::map<std::string, std::string> fixed = {})
      : ReplacedGauges(family, std::vector<std::string>{std::move(label)}, std::move(fixed)) {}

  // Keyed by the values of `labels`, in their order.
  using Values = std::map<std::vector<std::string>, double>;

  // One label: `values` by its value, each gauge set to valueOf(value).
  template <typename Map, typename Value>
  void replace(const Map& values, Value valueOf) {
    Values keyed;
    for (const auto& [key, value] : values) keyed.emplace(std::vector{key}, valueOf(value));
    replace(keyed);
  }

  void replace(const Values& values) {
    const std::scoped_lock lock(mutex_);
    for (auto it = gauges_.begin(); it != gauges_.end();) {
      if (values.contains(it->first)) {
        ++it;
        continue;
      }
      family_.Remove(it->second);
      it = gauges_.erase(it);
    }
    for (const auto& [key, value] : values) {
      auto [it, inserted] = gauges_.try_emplace(key, nullptr);
      if (inserted) {
        std::map<std::string, std::string> labels = fixed_;
        for (std::size_t i = 0; i < labels_.size() && i < key.size(); ++i) {
          labels[labels_[i]] = key[i];
        }
        it->second = &family_.Add(labels);
      }
      it->second->Set(value);
    }
  }

 private:
  Family<Gauge>& family_;
  const std::vector<std::string> labels_;
  const std::map<std::string, std::string> fixed_;
  std::mutex mutex_;
  std::map<std::vector<std::string>, Gauge*> gauges_;
};

// Counts by partition and name as gauges labelled `partition` and the name's label.
ReplacedGauges::Values byPartition(const PartitionCounts& counts) {
  ReplacedGauges::Values values;
  for (const auto& [partition, byName] : counts.byPartition) {
    for (const auto& [name, n] : byName) {
      values.emplace(std::vector{partition, name}, static_cast<double>(n));
    }
  }
  return values;
}

// From a job's submission to its start: seconds for an idle cluster, days for a deep queue.
const Histogram::BucketBoundaries& queueWaitBuckets() {
  static const Histogram::BucketBoundaries kBuckets = {
      1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400, 28800, 86400, 172800, 604800};
  return kBuckets;
}

double asDouble(std::int64_t n) { return static_cast<double>(n); }

}  // namespace

struct OperatorMetrics::Impl {
  // Registered families live as long as the registry; the references below rely on that.
  std::shared_ptr<Registry> registry = std::make_shared<Registry>();

  ReplacedGauges jobs{gaugeFamily(*registry, "kubeslurm_jobs",
                                  "SlurmJobs by partition and Slurm job state (PENDING, RUNNING, "
                                  "...), as of the last scheduling cycle."),
                      std::vector<std::string>{"partition", "state"}};
  ReplacedGauges pendingReasons{
      gaugeFamily(*registry, "kubeslurm_pending_jobs",
                  "Pending SlurmJobs by partition and the reason squeue shows (Priority, "
                  "Resources, Dependency, ...), as of the last scheduling cycle."),
      std::vector<std::string>{"partition", "reason"}};
  ReplacedGauges nodes{gaugeFamily(*registry, "kubeslurm_nodes",
                                   "GPU nodes by Slurm node state (idle, mixed, allocated, drain, "
                                   "down), as of the last scheduling cycle."),
                       "state"};

  Family<Gauge>& gpuFamily =
      gaugeFamily(*registry, "kubeslurm_gpus",
                  "Cluster GPUs by what holds them: allocated (running SlurmJobs), foreign (pods "
                  "kubeslurm does not manage, or terminating), free, unavailable (nodes drained, "
                  "down or not ready).");
  Gauge& gpusAllocated = gpuFamily.Add({{"state", "allocated"}});
  Gauge& gpusForeign = gpuFamily.Add({{"state", "foreign"}});
  Gauge& gpusFree = gpuFamily.Add({{"state", "free"}});
  Gauge& gpusUnavailable = gpuFamily.Add({{"state", "unavailable"}});
  // Not kubeslurm_gpus_total: Prometheus reserves _total for counters (promtool lints it).
  Gauge& gpusAllocatable = gaugeFamily(*registry, "kubeslurm_gpus_allocatable",
                                       "GPUs allocatable on nodes that are up; equals the "
                                       "allocated, foreign and free GPUs together.")
                               .Add({});

  ReplacedGauges accountFairShare{
      gaugeFamily(*registry, "kubeslurm_account_fairshare",
                  "Fair-share factor of each account in [0, 1], as sshare shows it: 1 for an "
                  "account that used nothing, 0.5 at its share, towards 0 above it."),
      "account"};
  ReplacedGauges accountWaitingJobs{
      gaugeFamily(*registry, "kubeslurm_account_waiting_jobs",
                  "Pending SlurmJobs of each account that wait only for their turn (reason "
                  "Priority or Resources), as of the last scheduling cycle."),
      "account"};
  Family<Gauge>& partitionGpuFamily =
      gaugeFamily(*registry, "kubeslurm_partition_gpus",
                  "GPUs of each partition's nodes by what holds them (the states of "
                  "kubeslurm_gpus); a node in two partitions counts in both.");
  ReplacedGauges partitionGpusAllocated{partitionGpuFamily, "partition", {{"state", "allocated"}}};
  ReplacedGauges partitionGpusForeign{partitionGpuFamily, "partition", {{"state", "foreign"}}};
  ReplacedGauges partitionGpusFree{partitionGpuFamily, "partition", {{"state", "free"}}};
  ReplacedGauges partitionGpusUnavailable{
      partitionGpuFamily, "partition", {{"state", "unavailable"}}};
  Family<Gauge>& partitionJobFamily = gaugeFamily(
      *registry, "kubeslurm_partition_jobs", "SlurmJobs of each partition, pending or running.");
  ReplacedGauges partitionJobsPending{partitionJobFamily, "partition", {{"state", "pending"}}};
  ReplacedGauges partitionJobsRunning{partitionJobFamily, "partition", {{"state", "running"}}};
  Family<Histogram>& queueWait =
      histogramFamily(*registry, "kubeslurm_job_queue_wait_seconds",
                      "From a job's submission to the start of its gang, per partition (a "
                      "requeued job counts again from its submission, as sacct's Reserved).");
  ReplacedGauges accountShares{
      gaugeFamily(*registry, "kubeslurm_account_shares",
                  "Each account's normalized share of its parent (sshare NormShares), against "
                  "which its usage is charged."),
      "account"};
  ReplacedGauges accountUsage{
      gaugeFamily(*registry, "kubeslurm_account_usage",
                  "Usage of each account behind its fair-share: billing-weighted GPU-seconds, "
                  "decayed by the half-life."),
      "account"};

  Gauge& leader = gaugeFamily(*registry, "kubeslurm_leader",
                              "1 while this replica holds the leader lease and schedules, else 0.")
                      .Add({});

  Histogram& cycleDuration =
      histogramFamily(*registry, "kubeslurm_scheduler_cycle_duration_seconds",
                      "Wall time of a whole scheduling cycle: snapshot, plan and API writes.")
          .Add({}, cycleBuckets());
  Histogram& planDuration =
      histogramFamily(*registry, "kubeslurm_scheduler_plan_duration_seconds",
                      "Wall time of the planning step alone (priority, main pass and backfill).")
          .Add({}, cycleBuckets());
  Counter& cycles = counterFamily(*registry, "kubeslurm_scheduler_cycles_total",
                                  "Scheduling cycles run by this replica.")
                        .Add({});
  Family<Counter>& startedFamily =
      counterFamily(*registry, "kubeslurm_jobs_started_total",
                    "SlurmJobs started; backfilled=\"true\" for those started out of priority "
                    "order by the backfill pass.");
  Counter& startedInOrder = startedFamily.Add({{"backfilled", "false"}});
  Counter& startedBackfilled = startedFamily.Add({{"backfilled", "true"}});
  Counter& budgetExhausted =
      counterFamily(*registry, "kubeslurm_scheduler_budget_exhausted_total",
                    "Cycles that stopped testing jobs at the scheduling budget (like Slurm's "
                    "bf_max_job_test); lower-priority jobs were not considered that cycle.")
          .Add({});
  Gauge& backfillDepth = gaugeFamily(*registry, "kubeslurm_backfill_depth",
                                     "Jobs the last backfill pass tested (sdiag's Depth).")
                             .Add({});
  Gauge& backfillReservations =
      gaugeFamily(*registry, "kubeslurm_backfill_reservations",
                  "Future start reservations the last backfill pass held for blocked jobs.")
          .Add({});

  Family<Counter>& gangFamily =
      counterFamily(*registry, "kubeslurm_gang_admissions_total",
                    "Gang admissions of a job's pods: bound (all pods bound) or rolled_back (a "
                    "bind failed and the bound pods were released).");
  Counter& gangBound = gangFamily.Add({{"result", "bound"}});
  Counter& gangRolledBack = gangFamily.Add({{"result", "rolled_back"}});
  Histogram& gangDuration = histogramFamily(*registry, "kubeslurm_gang_admission_duration_seconds",
                                            "Wall time to bind (or roll back) all pods of a job.")
                                .Add({}, gangBuckets());

  Family<Counter>& transitions = counterFamily(*registry, "kubeslurm_job_transitions_total",
                                               "SlurmJob state transitions, by the state entered.");
  Counter& jobIdsAssigned = counterFamily(*registry, "kubeslurm_job_ids_assigned_total",
                                          "Slurm job IDs handed out to new SlurmJobs.")
                                .Add({});
  Family<Counter>& apiErrors =
      counterFamily(*registry, "kubeslurm_api_errors_total",
                    "Kubernetes API requests that failed after retries, by verb.");
  Counter& recordsWritten = counterFamily(*registry, "kubeslurm_accounting_records_written_total",
                                          "Job records committed to the accounting store.")
                                .Add({});
  Counter& recordBatchesFailed =
      counterFamily(*registry, "kubeslurm_accounting_write_failures_total",
                    "Batches of job records the accounting store refused (kept and retried).")
          .Add({});
  Family<Counter>& accountGpuSeconds = counterFamily(
      *registry, "kubeslurm_account_gpu_seconds_total",
      "GPU-seconds held by running jobs, by account and user, counted each scheduling cycle up "
      "to it (an exclusive job's whole nodes): what a chargeback sums. Not weighted, not "
      "decayed; the accounting store keeps the records behind it.");
  Gauge& recordsQueued = gaugeFamily(*registry, "kubeslurm_accounting_records_queued",
                                     "Job records waiting to be written to the accounting store.")
                             .Add({});
  AccountingFigures lastAccounting;
};

OperatorMetrics::OperatorMetrics() : impl_(std::make_unique<Impl>()) {
  // Labelled counters start at 0, so that rate() and alerts see a series before the first event.
  for (const char* verb : {"get", "post", "put", "patch", "delete"}) {
    impl_->apiErrors.Add({{"verb", verb}});
  }
  for (const char* state : {"PENDING", "RUNNING", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT",
                            "NODE_FAIL", "PREEMPTED", "REQUEUED", "OUT_OF_MEMORY"}) {
    impl_->transitions.Add({{"state", state}});
  }
}
OperatorMetrics::~OperatorMetrics() = default;

void OperatorMetrics::setJobs(const PartitionCounts& byState) {
  impl_->jobs.replace(byPartition(byState));
}

void OperatorMetrics::setPendingReasons(const PartitionCounts& byReason) {
  impl_->pendingReasons.replace(byPartition(byReason));
}

void OperatorMetrics::setNodes(const std::map<std::string, std::int64_t>& byState) {
  impl_->nodes.replace(byState, asDouble);
}

void OperatorMetrics::setGpus(const GpuCounts& gpus) {
  impl_->gpusAllocatable.Set(asDouble(gpus.total));
  impl_->gpusAllocated.Set(asDouble(gpus.allocated));
  impl_->gpusForeign.Set(asDouble(gpus.foreign));
  impl_->gpusFree.Set(asDouble(gpus.free));
  impl_->gpusUnavailable.Set(asDouble(gpus.unavailable));
}

void OperatorMetrics::setAccounts(const std::map<std::string, AccountFigures>& accounts) {
  impl_->accountFairShare.replace(accounts, [](const AccountFigures& a) { return a.fairShare; });
  impl_->accountUsage.replace(accounts, [](const AccountFigures& a) { return a.usage; });
  impl_->accountShares.replace(accounts, [](const AccountFigures& a) { return a.shares; });
  impl_->accountWaitingJobs.replace(
      accounts, [](const AccountFigures& a) { return asDouble(a.waitingJobs); });
}

void OperatorMetrics::setPartitions(const std::map<std::string, PartitionFigures>& partitions) {
  Impl& m = *impl_;
  m.partitionGpusAllocated.replace(
      partitions, [](const PartitionFigures& p) { return asDouble(p.gpus.allocated); });
  m.partitionGpusForeign.replace(
      partitions, [](const PartitionFigures& p) { return asDouble(p.gpus.foreign); });
  m.partitionGpusFree.replace(partitions,
                              [](const PartitionFigures& p) { return asDouble(p.gpus.free); });
  m.partitionGpusUnavailable.replace(
      partitions, [](const PartitionFigures& p) { return asDouble(p.gpus.unavailable); });
  m.partitionJobsPending.replace(partitions,
                                 [](const PartitionFigures& p) { return asDouble(p.pendingJobs); });
  m.partitionJobsRunning.replace(partitions,
                                 [](const PartitionFigures& p) { return asDouble(p.runningJobs); });
}

void OperatorMetrics::observeQueueWait(const std::string& partition, double seconds) {
  impl_->queueWait.Add({{"partition", partition}}, queueWaitBuckets()).Observe(seconds);
}

void OperatorMetrics::setLeader(bool leader) { impl_->leader.Set(leader ? 1 : 0); }

void OperatorMetrics::observeCycle(const CycleSample& sample) {
  impl_->cycles.Increment();
  impl_->cycleDuration.Observe(sample.seconds);
  impl_->planDuration.Observe(sample.planSeconds);
  const std::uint32_t backfilled = std::min(sample.jobsBackfilled, sample.jobsStarted);
  impl_->startedInOrder.Increment(sample.jobsStarted - backfilled);
  impl_->startedBackfilled.Increment(backfilled);
  if (sample.budgetExhausted) impl_->budgetExhausted.Increment();
  impl_->backfillReservations.Set(sample.reservations);
  impl_->backfillDepth.Set(sample.backfillDepth);
}

void OperatorMetrics::addGangAdmission(bool ok, double seconds) {
  (ok ? impl_->gangBound : impl_->gangRolledBack).Increment();
  impl_->gangDuration.Observe(seconds);
}

void OperatorMetrics::addJobTransition(const std::string& state) {
  impl_->transitions.Add({{"state", state}}).Increment();
}

void OperatorMetrics::addJobIdsAssigned(std::int64_t n) {
  // A counter only goes up; prometheus-cpp would silently ignore a negative step anyway.
  if (n > 0) impl_->jobIdsAssigned.Increment(asDouble(n));
}

void OperatorMetrics::addApiError(const std::string& verb) {
  impl_->apiErrors.Add({{"verb", verb}}).Increment();
}

void OperatorMetrics::addGpuSeconds(
    const std::map<std::pair<std::string, std::string>, double>& byAccountAndUser) {
  for (const auto& [who, seconds] : byAccountAndUser) {
    if (seconds <= 0) continue;  // a counter only grows
    impl_->accountGpuSeconds.Add({{"account", who.first}, {"user", who.second}}).Increment(seconds);
  }
}

void OperatorMetrics::setAccounting(const AccountingFigures& figures) {
  AccountingFigures& last = impl_->lastAccounting;
  if (figures.recordsWritten > last.recordsWritten) {
    impl_->recordsWritten.Increment(
        static_cast<double>(figures.recordsWritten - last.recordsWritten));
  }
  if (figures.batchesFailed > last.batchesFailed) {
    impl_->recordBatchesFailed.Increment(
        static_cast<double>(figures.batchesFailed - last.batchesFailed));
  }
  impl_->recordsQueued.Set(static_cast<double>(figures.queued));
  last = figures;
}

std::shared_ptr<void> OperatorMetrics::registry() const { return impl_->registry; }

std::string OperatorMetrics::exposition() const {
  return prometheus::TextSerializer().Serialize(impl_->registry->Collect());
}

}  // namespace kubeslurm::metrics
