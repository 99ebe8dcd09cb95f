#include "controllers/will_run.h"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "controllers/job_object.h"
#include "controllers/job_request.h"
#include "kubeslurm/slurm/hostlist.h"
#include "kubeslurm/slurm/names.h"

namespace kubeslurm::controllers {

void applyPlan(core::Snapshot& snapshot, const core::Plan& plan, core::Time now) {
  std::set<core::JobId> victims;
  for (const core::Preemption& p : plan.preemptions) victims.insert(p.victim);
  std::erase_if(snapshot.jobs, [&](const core::Job& job) { return victims.contains(job.id); });
  for (const core::Start& start : plan.starts) {
    const auto job = std::ranges::find(snapshot.jobs, start.jobId, &core::Job::id);
    if (job == snapshot.jobs.end()) continue;
    job->phase = core::JobPhase::kRunning;
    job->allocatedNodes = start.nodes;
    job->startTime = now;
  }
}

StatusOr<WillRunResult> planWillRun(const SnapshotIndex& cluster,
                                    const std::vector<api::Partition>& partitions,
                                    const slurm::JobRequest& request, const std::string& user,
                                    const std::string& defaultAccount, core::JobId id,
                                    core::Time now, const core::Budget& budget) {
  std::string message;
  const std::vector<const api::Partition*> named = jobPartitions(request, partitions, &message);
  if (named.empty()) return invalidArgument(message);
  auto job = plannedJob(request, named, id, user, now, cluster.snapshot.nodes.size());
  if (!job.isOk()) return job.status();
  if (job->account.empty()) job->account = defaultAccount;

  core::Snapshot snapshot = cluster.snapshot;
  snapshot.jobs.push_back(*job);
  const core::Plan plan = core::plan(snapshot, now, budget);

  WillRunResult result;
  result.partition = job->partition;
  std::vector<core::NodeIndex> nodes;
  if (const auto start = std::ranges::find(plan.starts, id, &core::Start::jobId);
      start != plan.starts.end()) {
    result.start = now;
    nodes = start->nodes;
    result.partition = start->partition;  // of sbatch -p a,b, where it would start
  } else {
    const auto pending = std::ranges::find(plan.pending, id, &core::PendingDecision::jobId);
    if (pending == plan.pending.end()) {
      return internalError("the plan has no decision for the job");
    }
    if (pending->estimatedStart && !pending->estimatedNodes.empty()) {
      result.start = *pending->estimatedStart;
      nodes = pending->estimatedNodes;
      if (!pending->partition.empty()) result.partition = pending->partition;
    } else if (pending->reason == slurm::PendingReason::kResources ||
               pending->reason == slurm::PendingReason::kPriority ||
               pending->reason == slurm::PendingReason::kPartitionNodeLimit ||
               pending->reason == slurm::PendingReason::kBadConstraints) {
      // No configuration of the partition's nodes can hold it (or not within the backfill
      // window): what slurmctld's will-run test says.
      return Status(StatusCode::kResourceExhausted,
                    "Requested node configuration is not available");
    } else {
      return failedPrecondition(std::string(slurm::pendingReasonName(pending->reason)));
    }
  }
  std::vector<std::string> names;
  for (const core::NodeIndex node : nodes) {
    if (node >= cluster.nodeNames.size()) continue;
    names.push_back(cluster.nodeNames[node]);
    // slurmctld counts the CPUs it allocates: the job's share of each node, all of it when the
    // job has the node to itself.
    const std::uint64_t millis =
        job->exclusive ? snapshot.nodes[node].allocatable.cpuMillis : job->cpuMillisPerNode;
    result.processors += static_cast<std::uint32_t>(std::max<std::uint64_t>(millis / 1000, 1));
  }
  result.nodes = slurm::compressHostlist(names);
  return result;
}

StatusOr<WillRunAnswer> willRunForJob(const WillRunCluster& cluster,
                                      const std::string& jobNamespace,
                                      const nlohmann::json& slurmJob, std::int64_t jobId,
                                      core::Time now, const core::Budget& budget) {
  auto job = api::decodeSlurmJob(slurmJob);
  if (!job.isOk()) return invalidArgument(job.status().message());
  if (job->user.empty()) return invalidArgument("a job without a user");
  auto planned = planWillRun(*cluster.index, cluster.partitions, job->request, job->user,
                             defaultAccountFor(cluster.accounts, jobNamespace),
                             static_cast<core::JobId>(jobId), now, budget);
  if (!planned.isOk()) return planned.status();
  return WillRunAnswer{jobId, std::move(planned).value()};
}

}  // namespace kubeslurm::controllers
