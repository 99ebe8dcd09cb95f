// The scheduling core's model: a snapshot of the cluster as plain values, and the plan the core
// returns for it. PURE: no I/O, no threads, no clock. `now` is always a parameter.
//
//   decisions = plan(snapshot, now, budget)
//
// Controllers build a Snapshot from informer caches (or the simulator from a trace), call
// plan(), and apply the Plan; they make no scheduling choices of their own.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/slurm/dependency.h"
#include "kubeslurm/slurm/names.h"
#include "kubeslurm/slurm/topology_conf.h"

namespace kubeslurm::core {

using Time = std::int64_t;      // seconds since the Unix epoch
using Duration = std::int64_t;  // seconds
inline constexpr Duration kUnlimited = std::numeric_limits<Duration>::max() / 4;
using JobId = std::uint64_t;
using NodeIndex = std::uint32_t;  // index into Snapshot::nodes

// ---------------------------------------------------------------------------------------------
// Nodes

enum class NodeState { kUp, kDrain, kDown, kNotReady };

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule, PreferNoSchedule, NoExecute
  friend bool operator==(const Taint&, const Taint&) = default;
};

struct Resources {
  std::uint32_t gpus = 0;
  std::uint64_t cpuMillis = 0;
  std::uint64_t memoryBytes = 0;
  friend bool operator==(const Resources&, const Resources&) = default;
};

struct Node {
  std::string name;
  Resources allocatable;  // what the kubelet reports
  // Requests of every non-terminal pod bound here that kubeslurm does not own (inference
  // placed by the default scheduler). Fixed load: never a preemption victim (invariant 4).
  Resources foreignUsed;
  std::map<std::string, std::string, std::less<>> labels;
  std::vector<Taint> taints;
  NodeState state = NodeState::kUp;
  std::vector<std::string> features;  // matched by --constraint
};

// ---------------------------------------------------------------------------------------------
// Partitions and accounts

enum class PreemptMode { kOff, kRequeue, kCancel };
enum class PartitionState { kUp, kDown, kDrain, kInactive };

struct Partition {
  std::string name;
  std::vector<NodeIndex> nodes;
  bool isDefault = false;
  Duration maxTime = kUnlimited;
  std::optional<Duration> defaultTime;  // else maxTime
  std::uint32_t priorityTier = 1;       // preemption tier (PriorityTier)
  std::uint32_t priorityJobFactor = 1;  // the partition factor (PriorityJobFactor)
  PreemptMode preemptMode = PreemptMode::kOff;
  std::optional<std::uint32_t> maxNodesPerJob;
  // MaxMemPerNode (or MaxMemPerCPU, which the caller has already turned into CPUs): a job asking
  // more memory per node waits with MaxMemPerLimit.
  std::optional<std::uint64_t> maxMemoryBytesPerNode;
  std::vector<std::string> allowedAccounts;  // empty: all
  PartitionState state = PartitionState::kUp;
  // Taints the pods of the partition's jobs tolerate, besides each job's own (Job::tolerations):
  // of a job that names several partitions, only those of the one it is tried in apply.
  std::vector<Taint> tolerations;
};

// One association of Slurm's tree, as `sshare` lists them. An account association has an empty
// `user`; a user association (`sacctmgr add user U account=A`) has `user` set, `name` = its
// account A, and sits under that account (its `parent` is ignored). Associations without
// children (users, or accounts when no users are given) are the leaves that Fair Tree ranks and
// that jobs are charged to: a job maps to the user association (account, user) if there is one,
// else to the account association.
// TRES a limit may cap: the two a GPU scheduler accounts for (sacctmgr's gres/gpu and node).
struct TresLimit {
  std::optional<std::uint64_t> gpus;   // gres/gpu
  std::optional<std::uint64_t> nodes;  // node (MaxNodes= is MaxTRES=node)
  friend bool operator==(const TresLimit&, const TresLimit&) = default;
};

// An association's limits (sacctmgr add/modify account|user ... set Grp*=, Max*=), enforced as
// acct_policy.c does with AccountingStorageEnforce=limits. Grp* limits cap the association with
// everything below it and are checked at every level up to the root; Max* limits hold per job
// (MaxTRESPerJob, MaxWall) or per association (MaxJobs) and are inherited: a level that sets
// none takes its parent's.
struct AssociationLimits {
  std::optional<std::uint32_t> grpJobs;   // running jobs at and below (AssocGrpJobsLimit)
  TresLimit grpTres;                      // AssocGrpGRES, AssocGrpNodeLimit
  std::optional<std::uint32_t> maxJobs;   // running jobs per user (AssocMaxJobsLimit)
  TresLimit maxTresPerJob;                // AssocMaxGRESPerJob, AssocMaxNodePerJobLimit
  std::optional<Duration> maxWallPerJob;  // AssocMaxWallDurationPerJobLimit
  friend bool operator==(const AssociationLimits&, const AssociationLimits&) = default;
};

struct Account {
  std::string name;
  std::string parent;        // empty for the root
  std::uint32_t shares = 1;  // RawShares
  // Decayed usage in billing-seconds (GPU-seconds times TRES weights) as of Snapshot::usageTime,
  // charged directly to this association. An account's sshare RawUsage is this plus the usage of
  // everything below it.
  double rawUsage = 0.0;
  std::string user;  // empty: an account association
  AssociationLimits limits = {};
};

// A quality of service (sacctmgr add qos). Its limits override the association's of the same kind
// (a QOS GrpJobs makes the association's GrpJobs moot), as acct_policy.c checks them.
struct Qos {
  std::string name;
  std::uint32_t priority = 0;  // the QOS priority factor's numerator
  // preempt/qos: the QOS whose running jobs a job of this QOS may preempt (Preempt=).
  std::vector<std::string> preempt;
  // How jobs of this QOS are preempted; unset: SchedulerConfig::preemptMode.
  std::optional<PreemptMode> preemptMode;
  std::optional<std::uint32_t> grpJobs;         // QOSGrpJobsLimit
  TresLimit grpTres;                            // QOSGrpGRES, QOSGrpNodeLimit
  std::optional<std::uint32_t> maxJobsPerUser;  // QOSMaxJobsPerUserLimit
  TresLimit maxTresPerUser;                     // QOSMaxGRESPerUser, QOSMaxNodePerUserLimit
  TresLimit maxTresPerJob;                      // QOSMaxGRESPerJob, QOSMaxNodePerJobLimit
  std::optional<Duration> maxWallPerJob;        // QOSMaxWallDurationPerJobLimit
};

// ---------------------------------------------------------------------------------------------
// Jobs

enum class JobPhase { kPending, kRunning };

// A job's per-node request in one partition, where it differs from the job's own
// (Job::otherShapes).
struct PartitionShape {
  std::string partition;
  std::uint64_t cpuMillisPerNode = 0;
  std::uint64_t memoryBytesPerNode = 0;
  bool allNodeMemory = false;
  friend bool operator==(const PartitionShape&, const PartitionShape&) = default;
};

struct Job {
  JobId id = 0;
  std::string name;
  std::string user;
  std::string account;
  std::string partition;  // already defaulted by the caller
  // sbatch -p a,b: the partitions after the first, in the order given. The job is tried in each
  // (with that partition's priority and limits) and starts in the first where it fits; a running
  // job's `partition` is the one it runs in.
  std::vector<std::string> otherPartitions;
  // What one node holds for it in those of otherPartitions whose memory defaults give it another
  // shape than `partition` does: slurmctld recomputes the memory of a job that gave no --mem* from
  // the partition it tries (job_limits_check: DefMemPerCPU, then _valid_pn_min_mem's
  // MaxMemPerCPU). Absent for a partition: the same as in `partition`.
  std::vector<PartitionShape> otherShapes;
  std::string qos;

  // Request (per node unless stated).
  std::uint32_t minNodes = 1;
  std::uint32_t maxNodes = 1;  // >= minNodes
  std::uint32_t tasksPerNode = 1;
  std::uint32_t gpusPerNode = 0;
  std::uint64_t cpuMillisPerNode = 0;
  std::uint64_t memoryBytesPerNode = 0;
  Duration timeLimit = kUnlimited;  // already defaulted from the partition by the caller
  // sbatch -p a,b without --time where a has no DefaultTime: slurmctld leaves the limit unset
  // at submission and sets it when the job starts, from the partition it starts in
  // (node_scheduler.c select_nodes). Tried in a partition, the job's limit is then that
  // partition's DefaultTime, else its MaxTime; `timeLimit` still holds the first's.
  bool timeLimitFromPartition = false;
  bool exclusive = false;  // whole nodes
  // All of each node's memory (Slurm's pn_min_memory 0: --mem=0, or no memory asked on a
  // partition without DefMemPer*): no other job's rank fits beside it, since every job holds
  // memory, so it is placed as an exclusive job is; it is charged only what it asked for.
  bool allNodeMemory = false;
  std::vector<std::string> requiredNodes;  // -w (expanded)
  std::vector<std::string> excludedNodes;  // -x (expanded)
  std::vector<std::string> constraints;    // -C features, all required
  // -C "a|b", "(a|b)&c": each of these needs one of its features on every node of the job
  // (Slurm's OR without brackets: nodes may differ in which one they have).
  std::vector<std::vector<std::string>> constraintAnyOf;
  // -C "[a|b]" (matching OR): every node of the job has the same one of these features, tried in
  // this order (node_scheduler.c _get_req_features walks the features in order, first that fits).
  std::vector<std::string> matchingOneOf;
  bool hasFeatureConstraints() const {
    return !constraints.empty() || !constraintAnyOf.empty() || !matchingOneOf.empty();
  }
  // Taints this job's pods tolerate: a node taint matches when the key is equal and the value
  // and effect are equal or empty here. Nodes with an untolerated NoSchedule or NoExecute taint
  // take none of its ranks.
  std::vector<Taint> tolerations;
  std::optional<std::uint32_t> maxSwitches;  // --switches=N
  Duration switchesWait = 0;                 // --switches=N@wait
  // --contiguous: its nodes are consecutive in the cluster's node order (placement.h).
  bool contiguous = false;

  // Array task (each task is its own Job).
  std::optional<JobId> arrayJobId;
  std::optional<std::uint32_t> arrayTaskId;
  std::optional<std::uint32_t> arrayMaxRunning;  // %N throttle shared by the array

  std::optional<slurm::DependencySpec> dependency;
  Time beginTime = 0;  // --begin
  bool held = false;   // --hold / scontrol hold
  std::int32_t nice = 0;
  std::optional<std::uint32_t> adminPriority;  // --priority (fixed priority, as Slurm)
  std::uint32_t qosPriority = 0;  // the QOS's Priority; Snapshot::qos, when it defines it, wins
  std::uint32_t restarts = 0;
  Time submitTime = 0;
  Time eligibleTime = 0;  // when it became eligible (age accrues from here); 0 = submitTime
  bool requeue = true;    // may be requeued after preemption / node failure

  JobPhase phase = JobPhase::kPending;
  // Running jobs only.
  std::vector<NodeIndex> allocatedNodes;  // rank order
  Time startTime = 0;
  Resources perNodeAllocation() const;  // what one of its nodes holds for it
  // The same, and whether it holds whole nodes, when tried in `partitionName`.
  Resources perNodeAllocationIn(std::string_view partitionName) const;
  bool holdsWholeNodesIn(std::string_view partitionName) const;
  bool allNodeMemoryIn(std::string_view partitionName) const;
  const PartitionShape* shapeIn(std::string_view partitionName) const;
  // No other job's rank may share its nodes: --exclusive, or all of each node's memory.
  bool holdsWholeNodes() const { return exclusive || allNodeMemory; }
};

// Outcome of a job that has left the queue, for dependencies (afterok...) and singleton.
struct FinishedJob {
  JobId id = 0;
  std::optional<JobId> arrayJobId;
  std::optional<std::uint32_t> arrayTaskId;
  slurm::JobState state = slurm::JobState::kCompleted;
  std::int32_t exitCode = 0;
  Time startTime = 0;  // 0: unknown (never started, or not recorded); `after:ID+delay` uses it
  Time endTime = 0;
  std::string name;
  std::string user;
};

// A job whose ranks have all ended while its end is not recorded yet (the job controller
// records it in this cycle). It is planned no more, but what it used from usageTime up to its
// end is still charged: once recorded it is only a FinishedJob, and usageTime will have moved
// past its end. A job that ran while no operator did is charged this way.
struct EndedJob {
  Job job;  // as it ran: account, user, startTime, allocatedNodes
  Time endTime = 0;
};

// A job that exists and has not finished but is not in this plan: a gang being bound or torn
// down, a job that cannot run as written. Dependencies on it keep waiting; only a job that is
// gone lifts them (Slurm clears a dependency whose target record no longer exists).
struct UnplannedJob {
  JobId id = 0;
  std::optional<JobId> arrayJobId;
  std::optional<std::uint32_t> arrayTaskId;
  // Its gang is being bound (or torn down): as an array task it takes one of the %N slots, or
  // the next plan would start more tasks than the throttle allows while the first ones bind.
  bool starting = false;
};

// ---------------------------------------------------------------------------------------------
// Configuration

// Slurm's priority/multifactor weights (slurm.conf PriorityWeight*), and fair-share settings.
struct PriorityConfig {
  std::uint32_t weightAge = 1000;
  std::uint32_t weightFairshare = 10000;
  std::uint32_t weightJobSize = 1000;
  std::uint32_t weightPartition = 1000;
  std::uint32_t weightQos = 0;
  std::uint32_t weightTresGpu = 1000;            // PriorityWeightTRES=GRES/gpu=N
  Duration maxAge = Duration{7} * 86400;         // PriorityMaxAge
  Duration decayHalfLife = Duration{7} * 86400;  // PriorityDecayHalfLife
  bool favorSmall = false;                       // PriorityFavorSmall
  // Fair Tree is Slurm's default since 19.05 (PriorityFlags=NO_FAIR_TREE selects classic); the
  // reference cluster's sshare numbers are Fair Tree's.
  bool fairTree = true;
  // The largest QOS Priority, which normalises the QOS factor (Slurm divides by the largest
  // Priority of any QOS). 0: the largest qosPriority among the snapshot's jobs.
  std::uint32_t maxQosPriority = 0;
  double billingWeightGpu = 1.0;  // TRESBillingWeights=GRES/gpu=...
  double billingWeightCpu = 0.0;
};

enum class SchedulingPolicy { kFifo, kPriority, kBackfill };

// slurm.conf PreemptType: preempt/partition_prio (lower PriorityTier partitions with a
// PreemptMode) or preempt/qos (the QOS a job's QOS lists in Preempt=).
enum class PreemptType { kPartitionPriority, kQos };

struct SchedulerConfig {
  PriorityConfig priority;
  SchedulingPolicy policy = SchedulingPolicy::kBackfill;
  bool preemption = true;
  PreemptType preemptType = PreemptType::kPartitionPriority;
  // slurm.conf PreemptMode: how preempt/qos preempts jobs of a QOS that sets no PreemptMode.
  PreemptMode preemptMode = PreemptMode::kRequeue;
};

// A wall-time cap on a cycle's backfill (bf_max_time). The core reads no clock: the caller's
// deadline does, and a test's can count calls. Asked once per job backfill tests.
class Deadline {
 public:
  virtual ~Deadline() = default;
  virtual bool passed() const = 0;
};

// Bounded work per cycle, as Slurm's bf_max_job_test, bf_window, bf_resolution, bf_max_time.
struct Budget {
  std::uint32_t maxJobsTested = 500;   // bf_max_job_test
  Duration window = 86400;             // bf_window: how far ahead reservations are planned
  Duration resolution = 60;            // bf_resolution: time-slot granularity
  std::uint32_t maxReservations = 64;  // blocked jobs that get a reservation
  const Deadline* deadline = nullptr;  // bf_max_time; none: no cap
};

// ---------------------------------------------------------------------------------------------
// The snapshot

struct Snapshot {
  std::vector<Node> nodes;
  // Tree topology (topology.conf switches) or block topology (BlockName= records, BlockSizes=;
  // used when there are blocks and no switches). Empty: topologyLabels, else flat.
  slurm::TopologyConf topology;
  // Tree topology from node labels, used when `topology` is empty: the label keys naming the
  // tree's levels from the leaf upward (e.g. {"kubeslurm.io/leaf", "kubeslurm.io/spine"}). A
  // node's value for a key is its switch at that level; nodes without the leaf label (or with an
  // empty value) are outside the tree, as nodes that topology.conf does not list.
  std::vector<std::string> topologyLabels;
  std::vector<Partition> partitions;
  std::vector<Account> accounts;  // the association tree
  // QOS definitions. Empty: QOS names are not checked and Job::qosPriority is taken as given.
  // Otherwise a job whose QOS is not here is InvalidQOS.
  std::vector<Qos> qos;
  Time usageTime = 0;     // the time Account::rawUsage is as of
  std::vector<Job> jobs;  // pending and running
  std::vector<FinishedJob> finished;
  std::vector<UnplannedJob> unplanned;
  std::vector<EndedJob> ended;
  SchedulerConfig config;
};

// ---------------------------------------------------------------------------------------------
// The plan

// Every factor of a job's priority, as `sprio` shows them (already weighted).
struct PriorityFactors {
  double age = 0;
  double fairshare = 0;
  double jobSize = 0;
  double partition = 0;
  double qos = 0;
  double tresGpu = 0;
  std::int32_t nice = 0;
  std::uint32_t priority = 0;  // the total, as Slurm rounds it
};

struct Start {
  JobId jobId = 0;
  std::vector<NodeIndex> nodes;  // one per rank, in rank order (topology order)
  bool backfilled = false;
  std::string partition;  // where it starts: one of its partitions
};

struct Preemption {
  JobId victim = 0;
  JobId preemptor = 0;
  PreemptMode mode = PreemptMode::kRequeue;
};

struct PendingDecision {
  JobId jobId = 0;
  slurm::PendingReason reason = slurm::PendingReason::kPriority;
  // For reasons such as ReqNodeNotAvail: "UnavailableNodes:gpu-node-007".
  std::string reasonDetail;
  std::optional<Time> estimatedStart;     // squeue --start
  std::vector<NodeIndex> estimatedNodes;  // SCHEDNODES
  // The partition the decision is for: of a job that names several, the one whose entry speaks
  // for it (where the estimate puts it); "" when the job's partition does not exist.
  std::string partition;
  // The state of each dependency target, one per term target in order (singleton: one), for
  // squeue %E / scontrol Dependency= ("afterok:9(unfulfilled)"). Empty without a dependency or
  // once it is satisfied (Slurm then shows "(null)").
  std::vector<slurm::DependencyState> dependencyStates;
};

// Fair-share as `sshare` shows it, one row per account.
struct FairShareRow {
  std::string account;
  std::string user;  // set on user-association rows
  std::string parent;
  std::uint32_t depth = 0;  // 0 for the root; sshare indents by it
  std::uint32_t rawShares = 0;
  double normShares = 0;
  double rawUsage = 0;
  double effectiveUsage = 0;
  double fairShare = 0;  // the factor in [0, 1]
};

struct CycleStats {  // as sdiag reports the main and backfill passes
  std::uint32_t jobsConsidered = 0;
  std::uint32_t jobsStarted = 0;
  std::uint32_t jobsBackfilled = 0;
  std::uint32_t reservations = 0;
  std::uint32_t backfillDepth = 0;  // jobs tested by backfill
  bool budgetExhausted = false;     // bf_max_job_test or bf_max_time stopped backfill
  bool deadlinePassed = false;      // it was bf_max_time
};

// A pending job's priority in one of the partitions it names.
struct PartitionPriority {
  std::string partition;
  PriorityFactors factors;
};

struct Plan {
  std::vector<Start> starts;
  std::vector<Preemption> preemptions;
  std::vector<PendingDecision> pending;
  // One per pending job: the entry that leads it in the queue (a job of several partitions
  // shows its highest here).
  std::map<JobId, PriorityFactors> priorities;
  // A job of several partitions (sbatch -p a,b) has a priority in each, with that partition's
  // factor, and sprio shows one row per partition in the order the job names them
  // (priority_multifactor.c _filter_job appends one factors object per part_ptr_list entry).
  // Jobs of one partition are not listed.
  std::map<JobId, std::vector<PartitionPriority>> partitionPriorities;
  std::vector<FairShareRow> fairShare;
  CycleStats stats;
};

// The scheduler: a function of a snapshot and a time.
Plan plan(const Snapshot& snapshot, Time now, const Budget& budget);

// Usage over time (fair-share accrual and decay, chargeback): core/usage.h.

}  // namespace kubeslurm::core
