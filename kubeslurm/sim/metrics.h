// What a replay measured. Definitions follow the job-scheduling literature (Feitelson, Rudolph,
// Schwiegelshohn, "Parallel job scheduling: a status report", 2004):
//   wait              start - submit, over the jobs that started
//   bounded slowdown  max(1, (wait + run) / max(run, 10 s)): the 10 s bound keeps very short jobs
//                     from dominating the mean
//   makespan          last completion - first submission
//   utilization       allocated GPU-seconds / (cluster GPUs x makespan); node utilization counts
//                     a node busy while anything of ours runs on it
//   fairness          per account, usage share / fair share, summarised by Jain's index
//                     (sum x)^2 / (n sum x^2): 1 when every account got its share, 1/n when one got
//                     everything
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kubeslurm/core/model.h"

namespace kubeslurm::sim {

inline constexpr double kSlowdownBound = 10.0;  // seconds

enum class JobEnd { kCompleted, kTimeout, kCancelled, kNeverStarted };

// One job's fate in a replay. Times are seconds from the trace's origin (Workload::epoch).
struct JobOutcome {
  core::JobId id = 0;
  std::string account;
  std::int64_t submit = 0;
  std::int64_t start = -1;  // last start; -1 if never started
  std::int64_t end = -1;
  std::vector<core::NodeIndex> nodeList = {};  // the nodes of the last start, in rank order
  std::uint32_t gpus = 0;                      // GPUs held by the last start, all nodes together
  double gpuSeconds = 0;  // GPU-seconds held over every run (a requeued job runs twice)
  bool backfilled = false;
  std::uint32_t restarts = 0;
  JobEnd state = JobEnd::kNeverStarted;
};

struct Distribution {
  double mean = 0;
  double p50 = 0;
  double p95 = 0;
  double p99 = 0;
  double max = 0;
};

struct AccountUsage {
  std::string account;
  std::uint64_t jobs = 0;
  double share = 0;       // normalised shares: this account's fair share of the cluster
  double gpuSeconds = 0;  // what its jobs held
  double usage = 0;       // gpuSeconds / all accounts' gpuSeconds
  double meanWait = 0;
};

struct Metrics {
  std::uint64_t jobs = 0;  // replayed (submitted to the scheduler)
  std::uint64_t started = 0;
  std::uint64_t completed = 0;
  std::uint64_t timedOut = 0;   // killed at their time limit
  std::uint64_t cancelled = 0;  // preempted with PreemptMode=CANCEL
  std::uint64_t neverStarted = 0;
  std::uint64_t backfilled = 0;  // started by the backfill pass (last start)
  std::uint64_t requeues = 0;
  std::int64_t makespan = 0;
  double gpuSeconds = 0;
  double gpuUtilization = 0;
  double nodeUtilization = 0;
  Distribution wait;  // seconds
  Distribution boundedSlowdown;
  std::vector<AccountUsage> accounts;  // by name
  double jainFairness = 1.0;
};

// The nearest-rank percentile (p in [0, 100]) of values sorted ascending; 0 when empty.
double percentile(std::span<const double> sorted, double p);
Distribution distribution(std::vector<double> values);
double boundedSlowdown(double wait, double run);
// Jain's fairness index of non-negative values; 1 when empty or all zero.
double jainIndex(std::span<const double> values);

struct MetricsInputs {
  std::uint64_t clusterGpus = 0;
  std::uint64_t clusterNodes = 0;
  double busyNodeSeconds = 0;
  std::vector<core::Account> accounts;  // the association tree: shares
};

Metrics computeMetrics(std::span<const JobOutcome> outcomes, const MetricsInputs& inputs);

}  // namespace kubeslurm::sim
