#include "operator/report_publisher.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

namespace kubeslurm::op {

void publishMetrics(metrics::OperatorMetrics& m, const controllers::CycleReport& report,
                    double cycleSeconds) {
  m.setJobs(metrics::PartitionCounts{report.jobsByState});
  m.setPendingReasons(metrics::PartitionCounts{report.pendingByReason});
  m.setNodes(report.nodesByState);
  metrics::GpuCounts gpus;
  gpus.total = report.gpusTotal;
  gpus.allocated = report.gpusAllocated;
  gpus.foreign = report.gpusForeign;
  gpus.free = report.gpusTotal - report.gpusAllocated - report.gpusForeign;
  gpus.unavailable = report.gpusUnavailable;
  m.setGpus(gpus);
  std::map<std::string, metrics::AccountFigures> accounts;
  for (const auto& row : report.fairShare) {
    if (row.user.empty()) accounts[row.account] = {row.fairShare, row.rawUsage, row.normShares};
  }
  for (const auto& job : report.pendingJobs) {
    if (job.reason == "Priority" || job.reason == "Resources") ++accounts[job.account].waitingJobs;
  }
  m.setAccounts(accounts);
  std::map<std::string, metrics::PartitionFigures> partitions;
  for (const auto& [name, load] : report.partitions) {
    metrics::PartitionFigures& p = partitions[name];
    p.gpus.allocated = load.gpusAllocated;
    p.gpus.foreign = load.gpusForeign;
    p.gpus.free = load.gpusFree;
    p.gpus.unavailable = load.gpusUnavailable;
    p.pendingJobs = load.pendingJobs;
    p.runningJobs = load.runningJobs;
  }
  // A cycle stopped by the fence reports no partitions: keep the last figures then.
  if (!report.fenceClosed) m.setPartitions(partitions);
  for (const auto& wait : report.queueWaits) m.observeQueueWait(wait.partition, wait.seconds);
  metrics::CycleSample sample;
  sample.seconds = cycleSeconds;
  sample.planSeconds = report.planSeconds;
  sample.jobsConsidered = report.stats.jobsConsidered;
  sample.jobsStarted = report.starts;
  sample.jobsBackfilled = report.backfilled;
  sample.reservations = report.stats.reservations;
  sample.backfillDepth = report.stats.backfillDepth;
  sample.budgetExhausted = report.stats.budgetExhausted;
  m.observeCycle(sample);
  for (const auto& admission : report.admissions) {
    m.addGangAdmission(admission.bound, admission.seconds);
  }
  for (const std::string& state : report.transitions) m.addJobTransition(state);
  m.addJobIdsAssigned(report.idsAssigned);
  m.addGpuSeconds(report.gpuSeconds);
}

void QueryPublisher::publish(controllers::CycleReport& report, double cycleSeconds,
                             std::int64_t now) {
  ++cycles_;
  totalSeconds_ += cycleSeconds;
  maxSeconds_ = std::max(maxSeconds_, cycleSeconds);
  totalStarted_ += report.starts;
  totalBackfilled_ += report.backfilled;
  auto state = std::make_shared<rpc::QueryState>();
  state->planTime = now;
  state->fairTree = priority_.fairTree;
  state->weights.age = priority_.weightAge;
  state->weights.fairshare = priority_.weightFairshare;
  state->weights.jobSize = priority_.weightJobSize;
  state->weights.partition = priority_.weightPartition;
  state->weights.qos = priority_.weightQos;
  if (priority_.weightTresGpu > 0) {
    state->weights.tres = "GRES/gpu=" + std::to_string(priority_.weightTresGpu);
  }
  for (const auto& job : report.pendingJobs) {
    rpc::PendingJob& out = state->pending.emplace_back();
    out.jobId = static_cast<std::int64_t>(job.jobId);
    out.namespaceName = job.namespaceName;
    out.name = job.name;
    out.partition = job.partition;
    out.user = job.user;
    out.account = job.account;
    out.qos = job.qos;
    out.reason = job.reason;
    out.priority = job.priority;
    for (const core::PartitionPriority& each : job.partitionPriorities) {
      out.partitionPriorities.push_back({each.partition, each.factors});
    }
    out.estimatedStart = job.estimatedStart.value_or(0);
    out.estimatedNodes = job.estimatedNodes;
    out.arrayJobId = static_cast<std::int64_t>(job.arrayJobId.value_or(0));
    out.arrayTaskId = job.arrayTaskId ? static_cast<std::int64_t>(*job.arrayTaskId) : -1;
  }
  state->fairShare = report.fairShare;
  rpc::Statistics& stats = state->statistics;
  stats.serverStart = serverStart_;
  stats.cycles = cycles_;
  stats.lastCycleSeconds = cycleSeconds;
  stats.meanCycleSeconds = totalSeconds_ / static_cast<double>(cycles_);
  stats.maxCycleSeconds = maxSeconds_;
  stats.jobsConsidered = report.stats.jobsConsidered;
  stats.jobsStarted = report.starts;
  stats.jobsBackfilled = report.backfilled;
  stats.backfillDepth = report.stats.backfillDepth;
  stats.totalJobsStarted = totalStarted_;
  stats.totalJobsBackfilled = totalBackfilled_;
  stats.jobsByState = metrics::PartitionCounts{report.jobsByState}.total();
  auto cluster = std::make_shared<Cluster>(Cluster{
      report.plannedCluster, std::move(report.partitionObjects), std::move(report.accountObjects)});
  const std::lock_guard lock(mutex_);
  state_ = std::move(state);
  if (report.plannedCluster) cluster_ = std::move(cluster);
}

}  // namespace kubeslurm::op
