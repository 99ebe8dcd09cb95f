#include "controllers/job_status.h"

#include <algorithm>
#include <limits>
#include <string_view>
#include <utility>

#include "controllers/job_object.h"
#include "kubeslurm/base/text.h"
#include "kubeslurm/kube/merge_patch.h"
#include "kubeslurm/podspec/rank_pods.h"
#include "kubeslurm/slurm/hostlist.h"
#include "kubeslurm/slurm/names.h"
#include "kubeslurm/step/step_records.h"

namespace kubeslurm::controllers {

namespace {

// The rank's own container: the operator's "rank" container, else the template's first.
const api::ContainerStatus* rankContainer(const api::Pod& pod) {
  for (const api::ContainerStatus& c : pod.status.containerStatuses) {
    if (c.name == podspec::kRankContainerName) return &c;
  }
  return pod.status.containerStatuses.empty() ? nullptr : &pod.status.containerStatuses.front();
}

// What a pod that is not running waits for, in the kubelet's words: the first waiting
// container (init containers first, as they run first), else the pod's phase.
std::string whyNotRunning(const api::Pod& pod) {
  const auto waiting = [](const std::vector<api::ContainerStatus>& statuses,
                          const char* kind) -> std::string {
    for (const api::ContainerStatus& c : statuses) {
      if (c.state.kind == api::ContainerState::Kind::kRunning && std::string(kind) == "init") {
        return std::string(kind) + " container " + c.name + " still running";
      }
      if (c.state.kind != api::ContainerState::Kind::kWaiting) continue;
      std::string why = std::string(kind) + " container " + c.name + ": " +
                        (c.state.reason.empty() ? "waiting" : c.state.reason);
      if (!c.state.message.empty()) why += " (" + c.state.message.substr(0, 200) + ")";
      return why;
    }
    return "";
  };
  if (std::string why = waiting(pod.status.initContainerStatuses, "init"); !why.empty()) {
    return why;
  }
  if (std::string why = waiting(pod.status.containerStatuses, "main"); !why.empty()) return why;
  return "pod " + (pod.status.phase.empty() ? std::string("not yet reported") : pod.status.phase);
}

std::optional<std::int64_t> containerStart(const api::Pod& pod) {
  std::optional<std::int64_t> earliest;
  for (const api::ContainerStatus& c : pod.status.containerStatuses) {
    const std::optional<std::int64_t> started =
        c.state.startedAt ? c.state.startedAt : c.lastState.startedAt;
    if (started && (!earliest || *started < *earliest)) earliest = started;
  }
  return earliest;
}

struct FailedRank {
  std::int64_t finishedAt = std::numeric_limits<std::int64_t>::max();
  std::uint32_t rank = 0;
  std::int32_t exitCode = 0;
  std::optional<std::int32_t> signal;
  std::string reason;
};

FailedRank failedRank(const api::Pod& pod, std::uint32_t rank) {
  FailedRank f;
  f.rank = rank;
  const api::ContainerStatus* c = rankContainer(pod);
  if (c != nullptr && c->state.kind == api::ContainerState::Kind::kTerminated) {
    f.exitCode = c->state.exitCode;
    f.signal = c->state.signal;
    f.reason = c->state.reason;
    if (c->state.finishedAt) f.finishedAt = *c->state.finishedAt;
  } else {
    // Failed without a container exit (evicted or past its deadline before it ran): Slurm's
    // launch failures end FAILED with exit status 1.
    f.exitCode = 1;
    f.reason = pod.status.reason;
  }
  return f;
}

// A job's end from its containers' own finishedAt, kept within [start, now]: node clocks drift,
// and no job ends before it began or after it is seen to have ended.
core::Time endedAt(std::optional<core::Time> finishedAt, const api::SlurmJobStatus& status,
                   core::Time now) {
  if (!finishedAt) return now;
  const core::Time start = status.startTime.value_or(*finishedAt);
  return std::clamp(*finishedAt, std::min(start, now), now);
}

// The steps the batch launcher reported. A message that is not its report (the user's own
// container may write the file) records nothing.
void recordSteps(const std::string& message, api::SlurmJobStatus& status) {
  auto records = step::decodeStepRecords(message);
  if (!records.isOk()) return;
  status.steps.clear();
  for (const step::StepRecord& r : records->steps) {
    api::JobStepStatus step;
    step.stepId = r.stepId;
    step.name = r.name;
    step.nodeList = r.nodelist;
    step.nodes = r.nnodes;
    step.tasks = r.ntasks;
    step.cpus = r.cpus;
    step.startTime = r.startTime;
    step.endTime = r.endTime;
    step.exitCode = std::to_string(r.exitCode) + ":" + std::to_string(r.signal);
    step.state = r.state;
    status.steps.push_back(std::move(step));
  }
  std::ranges::stable_sort(status.steps, {}, &api::JobStepStatus::stepId);
  if (records->dropped > 0) {
    status.stepsDropped = records->dropped;
  } else {
    status.stepsDropped.reset();
  }
}

void setState(api::SlurmJobStatus& status, slurm::JobState state) {
  status.state = std::string(slurm::jobStateName(state));
  status.stateCode = std::string(slurm::jobStateShortName(state));
}

std::string reasonName(slurm::PendingReason reason) {
  return std::string(slurm::pendingReasonName(reason));
}

bool isScriptJob(const api::SlurmJobObject& job) {
  const api::Json* podTemplate = api::specMember(job, "podTemplate");
  return podTemplate == nullptr || podTemplate->is_null();
}

// Pods to delete: those not already being deleted; `liveOnly` keeps finished pods (their logs
// are the job's output until the retention cleanup).
std::vector<std::string> podsToDelete(const GangObservation& gang, bool liveOnly) {
  std::vector<std::string> names;
  for (const ObservedPod& pod : gang.all) {
    if (pod.deleting || (liveOnly && pod.terminal)) continue;
    names.push_back(pod.name);
  }
  return names;
}

std::vector<std::string> stalePods(const GangObservation& gang) {
  std::vector<std::string> names;
  for (const ObservedPod& pod : gang.all) {
    if (pod.deleting || pod.attempt == gang.attempt) continue;
    names.push_back(pod.name);
  }
  return names;
}

// The end of a run: the fields Slurm sets when a job leaves RUNNING for good.
void finish(api::SlurmJobStatus& status, slurm::JobState state, std::string exitCode,
            slurm::PendingReason reason, core::Time now) {
  setState(status, state);
  status.exitCode = std::move(exitCode);
  status.reason = reasonName(reason);
  status.reasonDetail.clear();
  status.estimatedStart.reset();
  status.endTime = now;
}

// Back to the queue: the next run gets its own start time and nodes.
// The partitions a requeued job waits for again, as slurmctld's rebuild_job_part_list leaves
// its record: the one it started in first, then the others it asked for, in their order. Slurm
// lets no one move a running job to other partitions; here its spec may change while it runs, and
// a partition it no longer asks for is not put back (which also keeps the list within the
// request's length).
std::string requeuedPartitions(const std::string& startedIn, const std::string& requested) {
  if (startedIn.empty() || startedIn.find(',') != std::string::npos) return requested;
  const std::vector<std::string_view> names = partitionNames(requested);
  if (std::ranges::find(names, startedIn) == names.end()) return requested;
  std::string out = startedIn;
  for (const std::string_view name : names) {
    if (name != startedIn) out.append(",").append(name);
  }
  return out;
}

void requeue(api::SlurmJobStatus& status, const slurm::JobRequest& request, std::int64_t restarts,
             slurm::PendingReason reason) {
  setState(status, slurm::JobState::kRequeued);
  status.restarts = restarts;
  status.reason = reasonName(reason);
  status.reasonDetail.clear();
  status.startTime.reset();
  status.endTime.reset();
  status.nodeList.clear();
  // It may start in another of the partitions it names.
  status.partition = requeuedPartitions(status.partition, request.partition);
  status.estimatedStart.reset();
  // sacct shows the steps of the job's last run.
  status.steps.clear();
  status.stepsDropped.reset();
}

}  // namespace

bool cancelRequested(const api::SlurmJobObject& job) {
  const api::Json* cancel = api::specMember(job, "cancel");
  return cancel != nullptr && cancel->is_boolean() && cancel->get<bool>();
}

bool requeueRequested(const api::SlurmJobObject& job) {
  const std::int64_t handled =
      job.status ? job.status->requeuesHandled.value_or(0) : std::int64_t{0};
  return job.requeueRequests.value_or(0) > handled;
}

GangObservation observeGang(const api::SlurmJobObject& job, std::span<const api::Pod> pods,
                            const NodeHealth& nodes) {
  GangObservation gang;
  if (job.status && job.status->restarts && *job.status->restarts > 0) {
    gang.attempt = static_cast<std::uint32_t>(*job.status->restarts);
  }
  std::optional<FailedRank> first;
  for (const api::Pod& pod : pods) {
    ObservedPod seen;
    seen.name = pod.metadata.name;
    seen.rank = podspec::bookkeepingNumber(pod.metadata.labels, podspec::kRankLabel);
    seen.attempt = podspec::bookkeepingNumber(pod.metadata.labels, podspec::kAttemptLabel);
    seen.nodeName = pod.spec.nodeName;
    seen.phase = pod.status.phase;
    seen.terminal = api::podIsTerminal(pod);
    seen.deleting = pod.metadata.deletionTimestamp.has_value();
    gang.all.push_back(seen);
    if (seen.attempt != gang.attempt || !seen.rank) continue;

    const std::uint32_t rank = *seen.rank;
    ++gang.pods;
    if (auto n =
            podspec::bookkeepingNumber(pod.metadata.annotations, podspec::kGangSizeAnnotation)) {
      gang.size = std::max(gang.size.value_or(0), *n);
    }
    if (gang.nodes.size() <= rank) gang.nodes.resize(rank + 1);
    gang.nodes[rank] = pod.spec.nodeName;
    if (gang.partition.empty()) gang.partition = admittedPartition(pod);
    if (!pod.spec.nodeName.empty()) ++gang.bound;
    if (!pod.spec.nodeName.empty() && pod.metadata.creationTimestamp) {
      gang.boundSince = gang.boundSince
                            ? std::min(*gang.boundSince, *pod.metadata.creationTimestamp)
                            : *pod.metadata.creationTimestamp;
    }
    if (gang.notStarted.empty() && pod.status.phase != "Running" && !seen.terminal) {
      gang.notStarted = "rank " + std::to_string(rank) + " on " +
                        (pod.spec.nodeName.empty() ? "no node" : pod.spec.nodeName) + ": " +
                        whyNotRunning(pod);
    }
    if (auto started = containerStart(pod)) {
      gang.earliestStart = gang.earliestStart ? std::min(*gang.earliestStart, *started) : *started;
    }

    if (const api::ContainerStatus* c = rankContainer(pod);
        c != nullptr && c->state.kind == api::ContainerState::Kind::kTerminated) {
      if (rank == 0) {
        gang.rank0Message = c->state.message;
        gang.rank0FinishedAt = c->state.finishedAt;
      }
      if (pod.status.phase == "Succeeded" && c->state.finishedAt) {
        gang.lastSucceededAt =
            std::max(gang.lastSucceededAt.value_or(*c->state.finishedAt), *c->state.finishedAt);
      }
    }
    const std::string& phase = pod.status.phase;
    if (phase == "Running") ++gang.running;
    if (phase == "Succeeded") {
      ++gang.succeeded;
      if (rank == 0) gang.rank0Succeeded = true;
    }
    if (phase == "Failed") {
      ++gang.failed;
      const std::string& reason = pod.status.reason;
      if (reason == "DeadlineExceeded") {
        gang.deadlineExceeded = true;
        if (const api::ContainerStatus* c = rankContainer(pod);
            c != nullptr && c->state.finishedAt) {
          gang.deadlineExceededAt = std::min(gang.deadlineExceededAt.value_or(*c->state.finishedAt),
                                             *c->state.finishedAt);
        }
      } else if (reason == "NodeLost") {
        gang.nodeFailed = true;
        gang.nodeFailure = "rank " + std::to_string(rank) + " lost with node " + pod.spec.nodeName;
      } else if (podspec::rejectedByKubelet(pod)) {
        // The scheduler's view of the node was stale.
        gang.kubeletRejected = true;
        gang.rejection = "rank " + std::to_string(rank) + " on " + pod.spec.nodeName + ": " +
                         reason + (pod.status.message.empty() ? "" : ": " + pod.status.message);
      } else {
        FailedRank f = failedRank(pod, rank);
        if (!first || std::tie(f.finishedAt, f.rank) < std::tie(first->finishedAt, first->rank)) {
          first = std::move(f);
        }
      }
    }
    if (!seen.terminal && !pod.spec.nodeName.empty() && !gang.nodeFailed) {
      auto node = nodes.find(pod.spec.nodeName);
      if (node == nodes.end()) {
        gang.nodeFailed = true;
        gang.nodeFailure =
            "node " + pod.spec.nodeName + " of rank " + std::to_string(rank) + " is gone";
      } else if (!node->second) {
        gang.nodeFailed = true;
        gang.nodeFailure =
            "node " + pod.spec.nodeName + " of rank " + std::to_string(rank) + " is not ready";
      }
    }
  }
  if (first) {
    gang.firstFailedRank = first->rank;
    gang.firstFailedExitCode = first->exitCode;
    if (first->finishedAt != std::numeric_limits<std::int64_t>::max()) {
      gang.firstFailedAt = first->finishedAt;
    }
    gang.firstFailedSignal = first->signal;
    gang.firstFailedReason = first->reason;
  }
  return gang;
}

StatusDecision decideStatus(const api::SlurmJobObject& job, const GangObservation& gang,
                            core::Time now, const JobStatusPolicy& policy) {
  StatusDecision d;
  const api::SlurmJobStatus before = job.status.value_or(api::SlurmJobStatus{});
  d.status = before;
  d.gracePeriodSeconds = policy.gracePeriodSeconds;
  const std::optional<slurm::JobState> parsed = before.state.empty()
                                                    ? std::optional(slurm::JobState::kPending)
                                                    : slurm::parseJobState(before.state);
  if (!parsed) return d;  // a state this operator did not write: leave it to a person
  const slurm::JobState state = *parsed;
  const std::string name = job.request.jobName.empty() ? job.name : job.request.jobName;

  auto done = [&](std::optional<JobEvent> event) {
    d.changed = d.status != before;
    if (d.changed) d.event = std::move(event);
    return d;
  };

  // scontrol requeue|requeuehold (spec.requeueRequests above status.requeuesHandled), with
  // slurmctld's checks in its order (Slurm 22.05 src/slurmctld/job_mgr.c _job_requeue_op): a
  // job that may not be requeued is refused (ESLURM_DISABLED, "Requested operation is presently
  // disabled"), then a pending one (ESLURM_JOB_PENDING, "Job is pending execution"). A running
  // job, or a finished one (COMPLETED, FAILED, TIMEOUT, CANCELLED, NODE_FAIL, PREEMPTED...),
  // goes back to the queue as its next attempt (restart_cnt++), through the same path as a
  // node-failure requeue: REQUEUED until its pods are gone, then PENDING and planned again.
  // Each count is handled once, refused or not, so a restarted operator does not repeat it.
  auto handleRequeue = [&]() {
    d.status.requeuesHandled = job.requeueRequests;
    std::string refusal;
    if (!job.request.requeue.value_or(true)) {
      refusal =
          "Requested operation is presently disabled (the job was submitted with --no-requeue)";
    } else if (!slurm::isFinished(state) && state != slurm::JobState::kRunning) {
      refusal = "Job is pending execution";
    } else if (cancelRequested(job)) {
      refusal = "spec.cancel is set: clear it to run the job again";
    }
    if (!refusal.empty()) {
      return done(JobEvent{"Warning", "RequeueRefused", "requeue refused: " + refusal});
    }
    // A held job (requeuehold sets spec.hold with the request) waits for scontrol release;
    // otherwise BeginTime, which squeue shows for a requeued job (batch_requeue_fini).
    requeue(
        d.status, job.request, before.restarts.value_or(0) + 1,
        job.request.hold ? slurm::PendingReason::kJobHeldUser : slurm::PendingReason::kBeginTime);
    d.deletePods = podsToDelete(gang, /*liveOnly=*/false);
    return done(JobEvent{"Normal", "Requeued",
                         std::string("job requeued") + (job.request.hold ? " and held" : "") +
                             " (scontrol requeue)"});
  };

  if (slurm::isFinished(state)) {
    if (requeueRequested(job)) return handleRequeue();
    // The job is over; ranks still running (ranks > 0 holding their nodes after the script,
    // or a gang whose deletes were lost) are stopped. The status is final.
    d.deletePods = podsToDelete(gang, /*liveOnly=*/true);
    return d;
  }

  const bool running = state == slurm::JobState::kRunning;
  if (cancelRequested(job)) {
    // scancel: a running job's tasks get SIGTERM, which sacct shows as "0:15"; a pending job
    // never ran and keeps "0:0".
    const bool ran = running || gang.running > 0;
    finish(d.status, slurm::JobState::kCancelled, ran ? "0:15" : "0:0", slurm::PendingReason::kNone,
           now);
    d.deletePods = podsToDelete(gang, /*liveOnly=*/true);
    return done(JobEvent{"Normal", "Cancelled", "job cancelled (scancel)"});
  }

  if (requeueRequested(job)) return handleRequeue();

  if (!running && (gang.kubeletRejected || gang.nodeFailed)) {
    // The gang never ran: roll it back whole (invariant 1) and queue the job again without
    // counting a restart; the kubelet's refusal means the scheduler's view was stale.
    requeue(
        d.status, job.request, before.restarts.value_or(0),
        gang.kubeletRejected ? slurm::PendingReason::kResources : slurm::PendingReason::kNodeDown);
    d.deletePods = podsToDelete(gang, /*liveOnly=*/false);
    return done(JobEvent{"Warning", "GangRolledBack",
                         "gang rolled back before it started: " +
                             (gang.kubeletRejected ? gang.rejection : gang.nodeFailure)});
  }

  const bool allStarted =
      gang.complete() && gang.running + gang.succeeded + gang.failed == *gang.size;
  // Only from PENDING: a rolled-back gang is REQUEUED until its pods are gone, so a decision
  // repeated before the pod watch shows the deletes counts the timeout once.
  if (state == slurm::JobState::kPending && !allStarted && gang.complete() && gang.boundSince &&
      policy.gangStartTimeout > 0 && now >= *gang.boundSince + policy.gangStartTimeout) {
    // Bound but not started in time: its nodes go back (rolled back whole, invariant 1), and
    // the job waits a backoff before it is planned again, or fails past the retry limit.
    const std::int64_t failures = before.startFailures.value_or(0) + 1;
    const std::string why =
        "gang did not start within " + std::to_string(policy.gangStartTimeout) + "s (" +
        (gang.notStarted.empty() ? "not all ranks running" : gang.notStarted) + ")";
    d.deletePods = podsToDelete(gang, /*liveOnly=*/false);
    d.status.startFailures = failures;
    if (failures > policy.gangStartRetries) {
      finish(d.status, slurm::JobState::kFailed, "0:0", slurm::PendingReason::kJobLaunchFailure,
             now);
      d.status.startTime = *gang.boundSince;  // Slurm's StartTime: when nodes were allocated
      d.status.reasonDetail = why + ", " + std::to_string(failures) + " times";
      return done(JobEvent{"Warning", "StartTimeout", d.status.reasonDetail + "; job failed"});
    }
    requeue(d.status, job.request, before.restarts.value_or(0), slurm::PendingReason::kBeginTime);
    d.status.retryStartAfter = now + gangStartBackoff(failures);
    d.status.reasonDetail = why;
    return done(JobEvent{"Warning", "StartTimeout",
                         why + "; rolled back, retry " + std::to_string(failures) + " of " +
                             std::to_string(policy.gangStartRetries) + " in " +
                             std::to_string(gangStartBackoff(failures)) + "s"});
  }
  if (!running && !allStarted) {
    // Pending: the scheduler and the binder own it. Pods of an earlier attempt go (their names
    // are the next gang's); a requeued job whose old pods are all gone is plain PENDING again.
    d.deletePods = stalePods(gang);
    if (state == slurm::JobState::kRequeued && gang.all.empty()) {
      setState(d.status, slurm::JobState::kPending);
    }
    return done(std::nullopt);
  }

  // The gang has run. Its start is Slurm's StartTime, when the nodes were allocated: the bind,
  // so that pulling images and init containers count against the time limit and are charged
  // as usage, as a prolog is in Slurm. The earliest container start where the bind time is not
  // known.
  if (!running || !d.status.startTime) {
    d.status.startTime = gang.boundSince ? *gang.boundSince : gang.earliestStart.value_or(now);
  }
  // Of a job that names several partitions, the one it started in (slurmctld rewrites the
  // job's partition when it starts); pods made before the annotation leave it as it was.
  if (!gang.partition.empty()) d.status.partition = gang.partition;
  if (!running || d.status.nodeList.empty()) {
    std::vector<std::string> hosts;
    for (std::uint32_t r = 0; r < gang.size.value_or(0); ++r) {
      hosts.push_back(podspec::rankPodName(job.name, r));
    }
    d.status.nodeList = slurm::compressHostlist(hosts);
  }

  if (!gang.rank0Message.empty()) recordSteps(gang.rank0Message, d.status);
  const bool succeeded =
      isScriptJob(job) ? gang.rank0Succeeded : gang.size && gang.succeeded == *gang.size;
  if (succeeded) {
    finish(d.status, slurm::JobState::kCompleted, "0:0", slurm::PendingReason::kNone,
           endedAt(isScriptJob(job) ? gang.rank0FinishedAt : gang.lastSucceededAt, d.status, now));
    d.deletePods = podsToDelete(gang, /*liveOnly=*/true);
    return done(JobEvent{"Normal", "Completed", "job " + name + " completed"});
  }

  if (gang.nodeFailed || gang.kubeletRejected || !gang.complete()) {
    const std::string what = gang.nodeFailed        ? gang.nodeFailure
                             : gang.kubeletRejected ? gang.rejection
                                                    : "rank pods of the running gang are gone";
    d.deletePods = podsToDelete(gang, /*liveOnly=*/false);
    if (job.request.requeue.value_or(true) && policy.requeueOnNodeFail) {
      // JobRequeue=1: slurmctld requeues a batch job whose node failed; the next attempt's pods
      // carry the new restart count.
      requeue(d.status, job.request, before.restarts.value_or(0) + 1,
              slurm::PendingReason::kNodeDown);
      return done(JobEvent{"Warning", "NodeFail", what + "; job requeued"});
    }
    finish(d.status, slurm::JobState::kNodeFail, "0:0", slurm::PendingReason::kNodeDown, now);
    return done(JobEvent{"Warning", "NodeFail", what});
  }

  if (gang.deadlineExceeded) {
    // The kubelet's activeDeadlineSeconds stopped it: the time limit, enforced while no
    // operator ran. Slurm's TIMEOUT, ended when the rank was stopped.
    finish(d.status, slurm::JobState::kTimeout, "0:0", slurm::PendingReason::kTimeLimit,
           endedAt(gang.deadlineExceededAt, d.status, now));
    d.deletePods = podsToDelete(gang, /*liveOnly=*/true);
    return done(JobEvent{"Warning", "TimeLimit",
                         "job " + name +
                             " reached its partition's time limit (the kubelet "
                             "stopped it at its rank pods' active deadline)"});
  }

  if (gang.firstFailedRank) {
    d.deletePods = podsToDelete(gang, /*liveOnly=*/true);
    const std::string rank = "rank " + std::to_string(*gang.firstFailedRank);
    if (gang.firstFailedReason == "OOMKilled") {
      // Slurm 22.05 ends a job killed by the OOM killer OUT_OF_MEMORY with ExitCode 0:125.
      finish(d.status, slurm::JobState::kOutOfMemory, "0:125", slurm::PendingReason::kOutOfMemory,
             endedAt(gang.firstFailedAt, d.status, now));
      return done(JobEvent{"Warning", "OutOfMemory", rank + " was killed by the OOM killer"});
    }
    // sacct's ExitCode is "status:signal": a task killed by signal S shows "0:S".
    const std::string exitCode = gang.firstFailedSignal
                                     ? "0:" + std::to_string(*gang.firstFailedSignal)
                                     : std::to_string(gang.firstFailedExitCode) + ":0";
    finish(d.status, slurm::JobState::kFailed, exitCode, slurm::PendingReason::kNonZeroExitCode,
           endedAt(gang.firstFailedAt, d.status, now));
    return done(JobEvent{"Warning", "Failed", rank + " failed with exit code " + exitCode});
  }

  const core::Duration limit = job.request.timeLimit
                                   ? job.request.timeLimit->seconds.value_or(core::kUnlimited)
                                   : policy.defaultTimeLimit;
  if (limit < core::kUnlimited && now >= *d.status.startTime + limit) {
    // slurmctld's time limit: SIGTERM, KillWait seconds, then SIGKILL; state TIMEOUT.
    finish(d.status, slurm::JobState::kTimeout, "0:0", slurm::PendingReason::kTimeLimit, now);
    d.deletePods = podsToDelete(gang, /*liveOnly=*/true);
    return done(JobEvent{"Warning", "TimeLimit", "job " + name + " reached its time limit"});
  }

  setState(d.status, slurm::JobState::kRunning);
  d.status.retryStartAfter.reset();
  d.status.reason = reasonName(slurm::PendingReason::kNone);
  d.status.reasonDetail.clear();
  d.status.estimatedStart.reset();
  d.status.endTime.reset();
  d.deletePods = stalePods(gang);
  return done(JobEvent{"Normal", "Started", "job " + name + " started on " + d.status.nodeList});
}

core::Duration gangStartBackoff(std::int64_t failures) {
  const std::int64_t doublings = std::clamp<std::int64_t>(failures - 1, 0, 4);
  return core::Duration{60} << doublings;
}

api::SlurmJobStatus submittedStatus(std::int64_t jobId, std::optional<core::Time> created,
                                    core::Time now) {
  api::SlurmJobStatus status;
  status.jobId = jobId;
  setState(status, slurm::JobState::kPending);
  status.reason = reasonName(slurm::PendingReason::kNone);
  status.submitTime = created.value_or(now);
  status.restarts = 0;
  return status;
}

StatusDecision preemptStatus(const api::SlurmJobObject& job, core::PreemptMode mode,
                             core::Time now) {
  StatusDecision d;
  const api::SlurmJobStatus before = job.status.value_or(api::SlurmJobStatus{});
  d.status = before;
  if (mode == core::PreemptMode::kOff) return d;
  if (mode == core::PreemptMode::kCancel) {
    finish(d.status, slurm::JobState::kPreempted, "0:15", slurm::PendingReason::kNone, now);
    d.event =
        JobEvent{"Warning", "Preempted", "preempted by a higher-priority partition; cancelled"};
  } else {
    requeue(d.status, job.request, before.restarts.value_or(0) + 1,
            slurm::PendingReason::kPreempted);
    d.event =
        JobEvent{"Warning", "Preempted", "preempted by a higher-priority partition; requeued"};
  }
  d.changed = d.status != before;
  if (!d.changed) d.event.reset();
  return d;
}

nlohmann::json statusPatch(const api::SlurmJobObject& job, const nlohmann::json& next) {
  const nlohmann::json cached = api::encodeSlurmJob(job);
  const auto statusOf = [](const nlohmann::json& object) {
    const auto it = object.find("status");
    return it == object.end() ? nlohmann::json::object() : *it;
  };
  nlohmann::json patch = {{"status", kube::mergePatchBetween(statusOf(cached), statusOf(next))}};
  const auto meta = next.find("metadata");
  const std::string resourceVersion =
      meta == next.end() ? std::string() : api::stringMember(*meta, "resourceVersion");
  if (!resourceVersion.empty()) patch["metadata"]["resourceVersion"] = resourceVersion;
  return patch;
}

std::optional<api::SlurmJobStatus> pendingStatusToWrite(const api::SlurmJobStatus& current,
                                                        std::string_view reason,
                                                        std::string reasonDetail,
                                                        std::optional<core::Time> estimatedStart,
                                                        std::optional<std::int64_t> priority) {
  const bool reasonMoved = current.reason != reason || current.reasonDetail != reasonDetail;
  const bool firstPriority = !current.priority && priority;
  if (!reasonMoved && !firstPriority) return std::nullopt;
  api::SlurmJobStatus next = current;
  next.reason = std::string(reason);
  next.reasonDetail = std::move(reasonDetail);
  next.estimatedStart = estimatedStart;
  if (priority) next.priority = priority;
  return next;
}

}  // namespace kubeslurm::controllers
