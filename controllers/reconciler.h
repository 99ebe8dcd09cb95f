// One leader's reconcile pass over the whole cluster: the job controller and the scheduling loop
// of docs/operator.md, level-triggered (DESIGN.md invariant 3).
//
//   cycle(input, now), in this order (Reconciler::cycle):
//     1. assumed gangs   admissions that ended since the last cycle are counted and acted on
//                        (an event, a backoff); the gangs this leader started that the caches
//                        do not show whole are added to the input as their pods, so they hold
//                        their nodes and are not planned twice (controllers/assumed_gangs.h)
//     2. job ids         a SlurmJob without status.jobId gets one (JobIdAllocator), PENDING,
//                        in the cycle's input only: the id goes out with the job's first write
//                        of the cycle (its reason, a Valid condition, an array's summary), one
//                        call where there were two; a job the plan starts has its id written
//                        before its admission, and the ids no write carried are sent after
//                        step 8. A job whose id write fails sits out the cycle. (A job that
//                        does not decode gets its id and Valid=False at once; an array's own
//                        record gets its id at once, to make its tasks with it in step 3.)
//     3. arrays          an array's tasks are created as SlurmJobs of their own, as
//                        planArrayExpansions (pure) plans, and the array's status sums theirs
//                        up (controllers/arrays.h)
//     4. plan            buildSnapshot + core::plan on the cluster as the caches show it;
//                        fair-share usage advanced by the UsageLedger (account_usage.h)
//     5. job status      observeGang + decideStatus for every job: RUNNING, COMPLETED, FAILED,
//                        TIMEOUT, NODE_FAIL/REQUEUED, CANCELLED; pod deletes; events; partial
//                        gangs no admission explains are swept; snapshot problems become a
//                        Valid=False condition
//     6. preemptions     victims' status (REQUEUED next attempt, or PREEMPTED)
//     7. starts          gangForStart, assumed at once; GangBinder::admit, all or nothing
//                        (invariant 1), runs on the assumed gangs' workers (admitInBackground)
//                        or before the cycle goes on
//     8. pending         reason as status when it changes, with the estimated start and
//                        priority of that moment (their drift is served live by the query API)
//     9. bookkeeping     Account usage (accountStatuses) and Partition status
//                        (partitionFigures, partition_status.h) written, job records offered
//                        to the accounting writer (accounting_writer.h), finished jobs past
//                        their retention and with their ended records written removed, rank pods
//                        whose end is recorded released from their job-tracking finalizer, the
//                        report's counts, and the cluster as the plan leaves it (for sbatch
//                        --test-only)
//
// A job written in step 5 or 6 is not started in the same cycle: its cached object is stale.
// Steps 5 and 8 decide every job first, then send their status writes together
// (sendStatusWrites, statusWriteParallelism in flight), then do what follows each write in job
// order; step 3 likewise sends its task creates and cancels together before the arrays'
// statuses; step 7 admits admissionParallelism gangs at once, and a job whose admission runs is
// left out of steps 5 to 7 until its outcome is collected.
// Every status write is a merge PATCH of /status carrying the cached resourceVersion (what
// changed, not the spec and script a PUT would carry), so a write based on a stale read fails
// with 409 and the next cycle reads again. Every write is behind the leader-election fence
// (invariant 2): when it closes, the cycle stops where it is.
//
// recover() runs once per leadership term, before the first cycle: it lists the operator's pods
// from the API server (not a cache, which may lag the previous leader's last writes) and
// removes every partial gang (invariant 1).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "controllers/account_usage.h"
#include "controllers/accounting_writer.h"
#include "controllers/admission.h"
#include "controllers/admission_holds.h"
#include "controllers/assumed_gangs.h"
#include "controllers/gang_binder.h"
#include "controllers/job_ids.h"
#include "controllers/job_status.h"
#include "controllers/partition_status.h"
#include "controllers/snapshot.h"
#include "kubeslurm/base/status.h"
#include "kubeslurm/core/model.h"
#include "kubeslurm/kube/client.h"
#include "kubeslurm/kube/event_recorder.h"
#include "kubeslurm/slurm/array_spec.h"

namespace kubeslurm::controllers {

struct ReconcilerOptions {
  SnapshotOptions snapshot;
  AdmissionOptions admission;
  core::Budget budget;  // its deadline is set per cycle from backfillMaxTime
  // bf_max_time: wall time backfill may take in one cycle; zero: no cap.
  std::chrono::milliseconds backfillMaxTime{30000};
  GangBinderOptions binder;
  // Gangs admitted at once (each binds its ranks bindParallelism at a time).
  std::size_t admissionParallelism = 32;
  // Admissions run while later cycles go on (their gangs assumed meanwhile): a cycle that starts
  // 200 gangs does not hold every other job's status and plan for their round trips. False: the
  // cycle waits for its admissions (they still run admissionParallelism at once).
  bool admitInBackground = true;
  // Called on an admission's worker when it ends, so that the loop runs the cycle that collects
  // it (a failed admission may change nothing the informers would report). Empty: nothing.
  std::function<void()> admissionEnded;
  // Job status writes of one cycle step in flight at once, and array task creates and cancels:
  // a burst of 200 submissions would otherwise wait for 200 round trips before the first of them
  // is planned.
  std::size_t statusWriteParallelism = 16;
  // The leader-election fence, checked before every write (also handed to the binder).
  std::function<bool()> canWrite;
  // slurm.conf JobRequeue: a job whose node fails is requeued unless it asked --no-requeue.
  bool requeueOnNodeFail = true;
  // JobStatusPolicy's gang start timeout (seconds; 0 = none) and the retries before failing.
  core::Duration gangStartTimeout = 600;
  std::int64_t gangStartRetries = 3;
  // A gang admitted but not seen whole by the pod informer after this long is forgotten (its pods
  // were deleted by someone else, or the watch is far behind and will relist).
  core::Duration expectationTimeout = 60;
  // A partial gang (findPartialGangs) whose newest pod is this old, and that this leader is not
  // admitting, is removed: a rollback that failed (the API server refused the deletes) would
  // otherwise leave the job out of every plan for good. Young ones may be a cache that lags.
  core::Duration stuckGangAge = 30;
  // Accounts' decayed usage is written to their status at least this often, and whenever a
  // running job ends (its usage would otherwise be lost with it), so that fair-share survives
  // a restart or a new leader.
  core::Duration usagePersistPeriod = 60;
  // A finished SlurmJob is deleted this long after its end (its pods with it, by owner
  // reference): the objects are what sacct reads, so they outlive Slurm's MinJobAge (300 s).
  // 0: never. With an accounting writer, a job also waits for its ended record (and an array
  // for its tasks'), so that what sacct reads outlives the object.
  core::Duration jobRetention = 86400;
  // Where job records go (issue 21); null: no lasting accounting. Not owned.
  AccountingWriter* accounting = nullptr;
  // Array tasks created per cycle (all arrays together): a 1,000-task array takes several
  // cycles rather than one cycle of 1,000 creates that would hold up every other job's start.
  // Each task made costs its create and, next cycle, its id: at 64, a cycle that makes tasks
  // holds a new job's id for about 0.7 s on this API server (2 cores), at 256 for 2.6 s
  // (tests/bench/scale/array_sweep.sh).
  std::size_t arrayTasksPerCycle = 64;
  // Made tasks of one array that may wait (pending) at once: the others wait in the array's
  // record until these start, as Slurm's meta record holds them, so that ten 10,000-task arrays
  // are not 100,000 SlurmJobs in etcd and in every cycle. At least the backfill's 20 per array
  // (Slurm's bf_max_job_array_resv), and as many as a cycle makes.
  std::size_t arrayWaitingTasks = 256;
  // slurm.conf's MaxArraySize: an array with a task id at or past it is refused, as slurmctld
  // refuses it at submission (the webhook does; without one, the array gets its id and an
  // InvalidSpec condition and no task is made). Lowering it stops arrays above it making tasks.
  std::uint32_t maxArraySize = slurm::kDefaultMaxArraySize;
};

// A SlurmJob whose object does not decode (a spec a user wrote by hand, e.g. timeLimit "xx").
// nlohmann::json's implicit members only throw on a corrupted value, a bug, not an input error.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct UndecodableJob {
  std::string namespaceName;
  std::string name;
  nlohmann::json object;  // as cached
  std::string message;    // decodeSlurmJob's error, naming the field
};

struct ReconcileInput {
  ClusterObjects objects;
  std::vector<UndecodableJob> undecodable;
};

// What one cycle saw and did, for metrics and logs.
struct CycleReport {
  core::CycleStats stats;
  double planSeconds = 0;
  std::uint32_t idsAssigned = 0;
  std::uint32_t statusWrites = 0;
  std::uint32_t writeConflicts = 0;  // 409: the cache was stale; the next cycle reads again
  std::uint32_t gangsAssumed = 0;    // gangs this plan started, handed to admission
  std::uint32_t starts = 0;          // gangs whose admission ended bound
  std::uint32_t backfilled = 0;      // of which started by backfill
  struct Admission {
    bool bound = false;  // false: rolled back (or stopped by the fence)
    double seconds = 0;
  };
  std::vector<Admission> admissions;  // one per gang admission tried
  std::uint32_t admissionFailures = 0;
  std::uint32_t preemptions = 0;
  std::uint32_t podsDeleted = 0;
  std::uint32_t jobsRemoved = 0;        // finished jobs past their retention
  std::uint32_t stuckGangsRemoved = 0;  // partial gangs no admission of ours explains
  std::uint32_t trackingReleased = 0;   // rank pods whose job-tracking finalizer was removed
  std::uint32_t arrayTasksCreated = 0;  // SlurmJobs made for array tasks
  bool fenceClosed = false;             // the cycle stopped because leadership ended
  // Job counts by effective partition (the partition a job asked for, even one that does not
  // exist, else the default's name) and Slurm state name; by partition and Slurm reason name.
  std::map<std::string, std::map<std::string, std::int64_t>> jobsByState;
  std::map<std::string, std::map<std::string, std::int64_t>> pendingByReason;
  std::map<std::string, std::int64_t> nodesByState;  // idle, mixed, allocated, drain, down
  std::int64_t gpusTotal = 0;                        // on nodes that are up
  std::int64_t gpusAllocated = 0;                    // held by running SlurmJobs
  std::int64_t gpusForeign = 0;                      // held by pods kubeslurm does not run
  std::int64_t gpusUnavailable = 0;                  // on drained, down or not-ready nodes
  // Per partition, as its status counts them (nodes in two partitions count in both).
  using PartitionLoad = controllers::PartitionLoad;
  std::map<std::string, PartitionLoad> partitions;
  struct QueueWait {
    std::string partition;
    double seconds = 0;  // from submission to this start
  };
  std::vector<QueueWait> queueWaits;  // one per gang started
  std::vector<core::FairShareRow> fairShare;
  // GPU-seconds held since the cycle before, by (account, user): UsageLedger::lastGpuSeconds.
  std::map<std::pair<std::string, std::string>, double> gpuSeconds;
  // The plan's pending jobs, for the query API (sprio, squeue --start).
  struct PendingJob {
    core::JobId jobId = 0;
    std::string namespaceName;
    std::string name;
    std::string partition;
    std::string user;
    std::string account;
    std::string qos;
    std::string reason;
    core::PriorityFactors priority;
    // A job of several partitions: its priority in each (core::Plan::partitionPriorities).
    std::vector<core::PartitionPriority> partitionPriorities;
    std::optional<core::Time> estimatedStart;
    std::string estimatedNodes;  // hostlist
    std::optional<core::JobId> arrayJobId;
    std::optional<std::uint32_t> arrayTaskId;
  };
  std::vector<PendingJob> pendingJobs;
  // The cluster as this cycle leaves it (controllers/will_run.h applyPlan), with the Partitions
  // and Accounts it was planned with: what sbatch --test-only plans against until the next cycle.
  std::shared_ptr<const SnapshotIndex> plannedCluster;
  std::vector<api::Partition> partitionObjects;
  std::vector<api::Account> accountObjects;
  std::vector<std::string> transitions;  // states jobs entered this cycle
  std::vector<std::string> errors;       // one line each, for the log
};

class Reconciler {
 public:
  Reconciler(kube::Reader& reader, kube::Writer& writer, kube::StatusWriter& statusWriter,
             kube::Binder& binder, JobIdAllocator& ids, kube::EventRecorder* events,
             ReconcilerOptions options);

  // Removes every partial gang (findPartialGangs over a fresh list of the operator's pods; the
  // jobs give each gang's current attempt). Returns how many gangs were removed.
  StatusOr<std::uint32_t> recover(const SharedList<api::SlurmJobObject>& jobs);

  CycleReport cycle(ReconcileInput input, core::Time now);

  // Leadership ended: what this leader expected to see belongs to no one now. Waits for the
  // admissions that run (the closed fence stops them at their next write).
  void reset();

  // Shutting down: the admissions that run finish, queued ones never start (nothing of theirs
  // was written), and nothing is admitted after. Before the clients it writes through go away.
  void finishAdmissions() { assumed_.finishRunning(); }

  const GangBinder& binder() const { return binder_; }

 private:
  bool fenceOpen() const;
  void assignIds(ReconcileInput& input, core::Time now, CycleReport& report);
  void expandArrays(const ClusterObjects& objects, core::Time now, CycleReport& report);
  void reconcileStatuses(const ClusterObjects& objects, core::Time now, CycleReport& report);
  void reportProblems(const ClusterObjects& objects, const SnapshotIndex& index, core::Time now,
                      CycleReport& report);
  void applyPreemptions(const core::Plan& plan, const SnapshotIndex& index, core::Time now,
                        CycleReport& report);
  void applyStarts(const core::Plan& plan, const ClusterObjects& objects,
                   const SnapshotIndex& index, core::Time now, CycleReport& report);
  // The admissions that ended: counted, their jobs told (an event, or admissionFailed).
  void admissionsEnded(std::vector<FinishedAdmission> ended, core::Time now, CycleReport& report);
  // A failed start: a refusal as written holds the job as InvalidPodSpec (its Valid condition
  // says why), anything else backs it off; either way the job hears of it.
  void admissionFailed(const api::SlurmJobObject& job, const Status& cause, core::Time now,
                       CycleReport& report);
  void applyPending(const core::Plan& plan, const SnapshotIndex& index, CycleReport& report);
  void summarize(const ClusterObjects& objects, const SnapshotIndex& index,
                 CycleReport& report) const;
  void persistUsage(const ClusterObjects& objects, const SnapshotIndex& index,
                    const core::Plan& plan, core::Time now, CycleReport& report);
  void updatePartitions(const ClusterObjects& objects, const SnapshotIndex& index, core::Time now,
                        CycleReport& report);
  // Deletes the finished jobs past their retention (controllers/retention.h).
  void removeExpired(const ClusterObjects& objects, core::Time now, CycleReport& report);
  // Removes the job-tracking finalizer of every rank pod whose outcome no job claims
  // (controllers/rank_tracking.h).
  void releaseTracking(const ClusterObjects& objects, CycleReport& report);
  void sweepStuckGangs(const ClusterObjects& objects, const SnapshotIndex& index, core::Time now,
                       CycleReport& report);

  // A job's next status: made by statusWrite() (`conditions` edits status.conditions), sent by
  // sendStatusWrites() as a merge PATCH of /status (statusPatch, job_status.h).
  // nlohmann::json's implicit members only throw on a corrupted value (as UndecodableJob).
  // NOLINTNEXTLINE(bugprone-exception-escape)
  struct StatusWrite {
    const api::SlurmJobObject* job = nullptr;
    std::string toState;
    nlohmann::json object;
    bool written = false;     // false: conflict, error, or the fence closed
    nlohmann::json response;  // the object as the API server returned it
  };
  static StatusWrite statusWrite(const api::SlurmJobObject& job, const api::SlurmJobStatus& status,
                                 const std::function<void(nlohmann::json& conditions)>& conditions);
  // Sends the writes statusWriteParallelism at a time (the jobs are distinct, so their order
  // does not matter to the API server), then counts each outcome in `report` in their order.
  void sendStatusWrites(std::span<StatusWrite> writes, CycleReport& report);
  // The ids of `keys` that no write carried yet, sent together (sendStatusWrites), each with its
  // job's status as it stands; returns the keys written.
  std::set<std::string> sendIds(const std::vector<std::string>& keys, CycleReport& report);
  // One write, sent alone. False when not written.
  bool writeStatus(const api::SlurmJobObject& job, const api::SlurmJobStatus& status,
                   const std::function<void(nlohmann::json& conditions)>& conditions,
                   CycleReport& report);
  void deletePods(const std::string& ns, const std::vector<std::string>& names,
                  std::int64_t gracePeriodSeconds, CycleReport& report);
  void recordEvent(const api::SlurmJobObject& job, const JobEvent& event);
  // The cycle's job by "ns/name" (jobsByKey_), or nullptr.
  const api::SlurmJobObject* findJob(const std::string& key) const;

  kube::Reader& reader_;
  kube::Writer& writer_;
  kube::StatusWriter& statusWriter_;
  JobIdAllocator& ids_;
  kube::EventRecorder* events_;
  ReconcilerOptions options_;
  GangBinder binder_;

  std::unordered_map<std::string, const api::SlurmJobObject*> jobsByKey_;  // during a cycle
  std::set<std::string> written_;  // jobs written this cycle: their cached objects are stale
  // Jobs numbered this cycle whose id is not written yet: the id goes out with the job's first
  // write of the cycle (its reason, a Valid condition, an array's summary of its tasks), one call
  // where there were two; a job the plan starts, and what is left at the end of the cycle, is
  // written alone. By "ns/name": the status the server holds, which that write's patch is taken
  // from, and the id.
  struct UnsentId {
    std::optional<api::SlurmJobStatus> serverStatus;
    std::int64_t id = 0;
  };
  std::map<std::string, UnsentId> unsentIds_;
  std::set<std::string> lostIds_;  // numbered this cycle, the write of the id failed
  core::Time lastUsageWrite_ = 0;
  UsageLedger usage_;                  // fair-share usage, carried from cycle to cycle
  std::set<std::string> leftRunning_;  // jobs this cycle moved out of RUNNING
  AdmissionHolds holds_;               // jobs held out of the plan (admission_holds.h)
  SnapshotMemo snapshotMemo_;          // translations carried from one cycle's snapshot on
  // Last: its workers admit through binder_, so they stop before it goes.
  AssumedGangs assumed_;
};

// The plan's pending jobs with their names, priorities and estimated starts (CycleReport).
std::vector<CycleReport::PendingJob> pendingJobsOf(const core::Plan& plan,
                                                   const SnapshotIndex& index);

// The reconciler's condition type: False with the problem's reason and message while a job
// cannot be scheduled as written; True once it can.
inline constexpr std::string_view kValidCondition = "Valid";

// Sets (or updates) the metav1.Condition `type` in a status.conditions array; the transition
// time moves only when the status does. Returns whether anything changed.
// What a status carries of text that a job's own input can make long (a -w list of unknown
// nodes, an API server's refusal quoting the pod): cut, with "..." at the end.
inline constexpr std::size_t kMaxReasonDetail = 1024;
inline constexpr std::size_t kMaxConditionMessage = 4096;
std::string boundedText(std::string_view text, std::size_t limit);

// `observedGeneration`: the metadata.generation the condition speaks of (a refusal of the pods as
// written holds until the spec changes, and a new leader reads that from here).
bool setCondition(nlohmann::json& conditions, std::string_view type, std::string_view status,
                  std::string_view reason, std::string_view message, core::Time now,
                  std::optional<std::int64_t> observedGeneration = std::nullopt);

}  // namespace kubeslurm::controllers
