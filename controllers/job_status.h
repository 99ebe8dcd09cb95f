// A job's gang as observed, and the SlurmJob status it implies. PURE: no I/O, no clock.
//
//   gang     = observeGang(job, pods, nodeHealth)
//   decision = decideStatus(job, gang, now, policy)
//
// The states decideStatus moves a job through (the scheduler's plan and preemptStatus are the
// other writers):
//
//   PENDING ---- every rank bound and running ---> RUNNING ---- ranks end ---> COMPLETED, FAILED,
//    | |  ^                                          |                        OUT_OF_MEMORY,
//    | |  | its pods are gone                        | node lost, scontrol    TIMEOUT, CANCELLED,
//    | |  |                                          | requeue, preempted     NODE_FAIL
//    | | REQUEUED <----------------------------------+
//    | |  ^
//    | +--+ before it ran: kubelet rejection, node lost, gang start timeout
//    |
//    +---- start timeouts past the retry limit --> FAILED (JobLaunchFailure); scancel --> CANCELLED
//
// Level-triggered (DESIGN.md invariant 3): the decision depends only on what is observed, and
// deciding again on the decided status changes nothing, so a repeated or reordered event writes
// nothing. Pods to delete are listed by name and exclude pods already being deleted, so a
// repeated decision does not repeat the deletes either.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/core/model.h"

namespace kubeslurm::controllers {

// Node name -> its Ready condition is True. A node that is absent is gone (deleted).
using NodeHealth = std::map<std::string, bool, std::less<>>;

// One of the job's pods, any attempt.
struct ObservedPod {
  std::string name;
  std::optional<std::uint32_t> rank;
  std::optional<std::uint32_t> attempt;
  std::string nodeName;  // spec.nodeName ("" = not bound)
  std::string phase;
  bool terminal = false;  // Succeeded or Failed
  bool deleting = false;  // metadata.deletionTimestamp set
};

struct GangObservation {
  std::uint32_t attempt = 0;          // status.restarts: the current attempt
  std::optional<std::uint32_t> size;  // the gang-size annotation of the current attempt
  std::uint32_t pods = 0;             // pods of the current attempt
  std::uint32_t bound = 0;
  std::uint32_t running = 0;
  std::uint32_t succeeded = 0;
  std::uint32_t failed = 0;
  bool rank0Succeeded = false;
  // The termination message of rank 0's container once it ended: the batch launcher's record of
  // the job's steps (step/step_records.h). Written inside the user's container: untrusted.
  std::string rank0Message;
  std::vector<std::string> nodes;  // by rank ("" for a rank without a pod or a node)
  std::string partition;           // the partition annotation: where the gang was admitted

  // The first rank that failed on its own (not a node loss, not a kubelet rejection): the
  // earliest container finishedAt, ties by rank.
  std::optional<std::uint32_t> firstFailedRank;
  std::int32_t firstFailedExitCode = 0;
  std::optional<core::Time> firstFailedAt;  // its container's finishedAt
  std::optional<std::int32_t> firstFailedSignal;
  std::string firstFailedReason;  // the container's terminated reason ("Error", "OOMKilled")

  // A rank's node is NotReady or gone, a rank pod failed with NodeLost, or a rank pod of a gang
  // that was complete has disappeared.
  bool nodeFailed = false;
  std::string nodeFailure;  // which node or rank, for the event
  // The kubelet refused a rank at admission (phase Failed, reason OutOf<resource>).
  bool kubeletRejected = false;
  // A rank the kubelet ended at its activeDeadlineSeconds (phase Failed, reason
  // DeadlineExceeded): the job ran past its partition's limit while no operator stopped it.
  bool deadlineExceeded = false;
  std::string rejection;                         // "rank 1 on gpu-2: OutOfnvidia.com/gpu: ..."
  std::optional<core::Time> deadlineExceededAt;  // that rank's container finishedAt

  std::optional<core::Time> earliestStart;  // earliest container start among the ranks
  // When the ranks' containers ended, as their kubelets recorded it: rank 0's, and the last
  // of the succeeded ranks'. A job that ended while no operator ran ends then, not when an
  // operator came back to see it.
  std::optional<core::Time> rank0FinishedAt;
  std::optional<core::Time> lastSucceededAt;
  // When the current attempt's gang was bound: the earliest creationTimestamp (set by the API
  // server) of its bound pods; the binder creates and binds a gang within seconds.
  std::optional<core::Time> boundSince;
  // The first rank of the current attempt that is not running and why, from its pod's
  // container statuses ("rank 1 on gpu-2: init container tools: ImagePullBackOff").
  std::string notStarted;
  std::vector<ObservedPod> all;  // every pod of the job, any attempt

  // Every rank of the current attempt has a pod and all of them are bound.
  bool complete() const { return size && *size > 0 && pods == *size && bound == *size; }
};

GangObservation observeGang(const api::SlurmJobObject& job, std::span<const api::Pod> pods,
                            const NodeHealth& nodes);

struct JobStatusPolicy {
  // The job's time limit when the request has none: the partition's DefaultTime, else MaxTime.
  core::Duration defaultTimeLimit = core::kUnlimited;
  // Seconds between SIGTERM and SIGKILL when the operator stops a gang: slurm.conf KillWait
  // (default 30 s), as slurmd waits after a time limit or scancel.
  std::int64_t gracePeriodSeconds = 30;
  // slurm.conf JobRequeue=1 (the default): batch jobs are requeued after a node failure unless
  // they asked --no-requeue.
  bool requeueOnNodeFail = true;
  // Kueue's waitForPodsReady: a gang bound this long and not all running (an image that cannot
  // be pulled, an init container that never ends) is rolled back and its nodes freed; after
  // `gangStartRetries` such rollbacks the job fails (JobLaunchFailure). 0 = no timeout.
  core::Duration gangStartTimeout = 600;
  std::int64_t gangStartRetries = 3;
};

// How long a job waits to be planned again after its n-th (1-based) start timeout: 1 min,
// doubling, at most 16 min.
core::Duration gangStartBackoff(std::int64_t failures);

struct JobEvent {
  std::string type;  // Normal, Warning
  std::string reason;
  std::string message;
};

struct StatusDecision {
  api::SlurmJobStatus status;           // the next status
  bool changed = false;                 // status differs from the job's
  std::vector<std::string> deletePods;  // names, not already being deleted
  std::int64_t gracePeriodSeconds = 0;  // for those deletes
  std::optional<JobEvent> event;        // only with a change
};

StatusDecision decideStatus(const api::SlurmJobObject& job, const GangObservation& gang,
                            core::Time now, const JobStatusPolicy& policy);

// spec.cancel is true: scancel asked for the job to end (CANCELLED).
bool cancelRequested(const api::SlurmJobObject& job);

// spec.requeueRequests is above status.requeuesHandled: `scontrol requeue` asked for the job to
// run again. decideStatus requeues a running or finished job (REQUEUED, restarts + 1, its pods
// deleted with the grace period) or refuses as slurmctld does (a pending job, --no-requeue, and
// a job whose spec.cancel is still set), and records the count as handled either way.
bool requeueRequested(const api::SlurmJobObject& job);

// A new job's first status: its id, PENDING with reason None (what squeue shows before the
// first scheduling pass), attempt 0, submitted when the object was created (`created`, else
// `now`).
api::SlurmJobStatus submittedStatus(std::int64_t jobId, std::optional<core::Time> created,
                                    core::Time now);

// A pending job's status after a plan that left it pending (`pending`: its reason, detail and
// estimate; `priority`: its priority then, if the plan gave one), or nothing when nothing worth a
// write moved. Written when the reason or its detail changes, and once to record a first
// priority, with the estimate and priority of that moment; their drift alone is not: both move
// every cycle, and at 50,000 pending jobs a write per job per period would be the API server's
// main load (issue 18). squeue --start, sprio and squeue's priority columns read them live from
// the query API. `reasonDetail` is the detail as it is to be stored (bounded by the caller).
std::optional<api::SlurmJobStatus> pendingStatusToWrite(const api::SlurmJobStatus& current,
                                                        std::string_view reason,
                                                        std::string reasonDetail,
                                                        std::optional<core::Time> estimatedStart,
                                                        std::optional<std::int64_t> priority);

// A running job the scheduler preempts. REQUEUE: the job goes back to the queue as its next
// attempt (REQUEUED, restarts + 1, reason BeginTime as slurmctld's batch_requeue_fini leaves
// it); its pods become a stale attempt, which decideStatus stops with the grace period. CANCEL:
// the job ends PREEMPTED with "0:15" (its tasks got SIGTERM), and decideStatus stops its live
// pods because the state is final.
StatusDecision preemptStatus(const api::SlurmJobObject& job, core::PreemptMode mode,
                             core::Time now);

// The merge PATCH of /status that takes the cached `job` to `next` (a SlurmJob object): what
// changed, a member `next` dropped as null, and the cached resourceVersion as the precondition a
// PUT would have. From the job as encoded, not its `raw`: a cached job's `raw` holds only what
// the codec does not model (holdSlurmJob, cluster_view.h).
nlohmann::json statusPatch(const api::SlurmJobObject& job, const nlohmann::json& next);

}  // namespace kubeslurm::controllers
