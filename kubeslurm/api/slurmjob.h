// A JobRequest as a SlurmJob object (kubeslurm.io/v1alpha1, crds/kubeslurm.io_slurmjobs.yaml)
// and back.
//
// Round trip. As for the core kinds (core_v1.h), `raw` keeps the object as decoded (shared, not
// copied: shared_json.h) and encodeSlurmJob() writes the modelled fields over it: what the codec
// does not model (metadata.labels, resourceVersion, spec.podTemplate, spec.rendezvous,
// status.conditions...) survives, and a field that still decodes to the same value keeps its text
// ("60" stays "60" rather than becoming "01:00:00"). So the operator can decode a job, set its
// status and write it back without losing what the user wrote. Metadata beyond name, generateName
// and namespace is read with decodeObjectMeta((*job.raw)["metadata"]).
//
// Naming. A Slurm job name is free text and need not be unique; a Kubernetes name must be unique
// and DNS-safe, and a job's rank pods (`<name>-<rank>`) and headless Service (`<name>`) are named
// after it. So a new SlurmJob gets `metadata.generateName`: the job name lowercased, every run of
// characters outside [a-z0-9] turned into one '-', a leading non-letter prefixed with "job-", cut
// to 46 characters, plus "-". The API server appends 5 random characters, which leaves a
// 52-character name: room for "-<rank>" within the 63-character hostname limit. The job's
// identity for Slurm users is status.jobId; the verbatim name is spec.jobName.
//
// Defaults. The object says what slurmctld would use: spec.output is "<workDir>/slurm-%j.out"
// ("slurm-%A_%a.out" for an array) when no -o was given; an empty spec.error means "with the
// output", as Slurm's StdErr= shows.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/api/shared_json.h"
#include "kubeslurm/base/status.h"
#include "kubeslurm/slurm/names.h"
#include "kubeslurm/slurm/sbatch_options.h"

namespace kubeslurm::api {

inline constexpr std::string_view kSlurmJobApiVersion = "kubeslurm.io/v1alpha1";
inline constexpr std::string_view kSlurmJobKind = "SlurmJob";

// One job step that ran and ended (srun in the batch script), as sacct's N.0, N.1 ... lines
// show it (step/step_records.h carries it out of the rank-0 pod).
struct JobStepStatus {
  std::int64_t stepId = 0;
  std::string name;
  std::string nodeList;
  std::int64_t nodes = 0;
  std::int64_t tasks = 0;
  std::int64_t cpus = 0;
  std::optional<slurm::EpochSeconds> startTime;
  std::optional<slurm::EpochSeconds> endTime;
  std::string exitCode;  // "code:signal"
  std::string state;     // COMPLETED, FAILED, CANCELLED
  friend bool operator==(const JobStepStatus&, const JobStepStatus&) = default;
};

// What the operator reports; all optional, as a new object has no status.
struct SlurmJobStatus {
  std::optional<std::int64_t> jobId;
  std::string state;      // PENDING, RUNNING, ... (slurm::jobStateName)
  std::string stateCode;  // PD, R, ... (slurm::jobStateShortName), for the ST column
  std::string reason;
  std::string reasonDetail;
  std::string nodeList;
  // The job's partition as slurmctld's job record holds it: while it waits, the list it asked
  // for (sbatch -p a,b) or the default partition it went to; once started, the one it runs (or
  // ran) in; requeued, that one first, then the others.
  std::string partition;
  std::optional<slurm::EpochSeconds> submitTime;
  std::optional<slurm::EpochSeconds> startTime;
  std::optional<slurm::EpochSeconds> endTime;
  std::optional<slurm::EpochSeconds> estimatedStart;
  std::string exitCode;  // "0:0"
  std::optional<std::int64_t> restarts;
  std::optional<std::int64_t> arrayJobId;
  std::optional<std::int64_t> arrayTaskId;
  std::optional<std::int64_t> priority;
  // The spec.requeueRequests count the operator last acted on (requeued the job, or refused
  // as slurmctld would): a larger spec count is a request still to handle.
  std::optional<std::int64_t> requeuesHandled;
  // Gangs of this job rolled back because they were bound but not all running within the
  // operator's start timeout, and the time before which the job is not planned again.
  std::optional<std::int64_t> startFailures;
  std::optional<slurm::EpochSeconds> retryStartAfter;
  std::vector<JobStepStatus> steps;          // the finished job's steps, by step id
  std::optional<std::int64_t> stepsDropped;  // steps the rank-0 pod could not report
  friend bool operator==(const SlurmJobStatus&, const SlurmJobStatus&) = default;
};

// spec.submitter: the authenticated identity that created the job, as the admission webhook
// stamped it from the API server's admission request.
struct Submitter {
  std::string username;
  std::string uid;
  std::vector<std::string> groups;
  friend bool operator==(const Submitter&, const Submitter&) = default;
};

// An array task as the operator makes it (controllers/arrays.h): labels that name its array and
// its index, and a controller reference to a SlurmJob of that name, whose uid this keeps.
inline constexpr std::string_view kArrayJobLabel = "kubeslurm.io/array-job";
inline constexpr std::string_view kArrayTaskLabel = "kubeslurm.io/array-task";
struct ArrayTaskOwner {
  std::string arrayName;
  std::string arrayUid;
  std::uint32_t taskId = 0;
  friend bool operator==(const ArrayTaskOwner&, const ArrayTaskOwner&) = default;
};

struct SlurmJobObject {
  std::string name;          // metadata.name, once the API server assigned it
  std::string generateName;  // metadata.generateName for a new object
  std::string namespaceName;
  // spec.user: who submitted, as Slurm shows them. The admission webhook stamps it (the Slurm
  // short name of the authenticated identity); without a webhook it is what the client wrote.
  std::string user;
  std::optional<Submitter> submitter;
  slurm::JobRequest request;
  std::string script;
  std::string scriptPath;
  std::vector<std::string> scriptArgs;
  // spec.requeueRequests: how many times `scontrol requeue|requeuehold` asked for the job to
  // go back to the queue. An event, not a state, so a count: the operator acts on each one
  // above status.requeuesHandled once.
  std::optional<std::int64_t> requeueRequests;
  std::optional<SlurmJobStatus> status;
  // With spec.array set, the task bookkeeping of its metadata, read once when the object is
  // decoded: each cycle asks every job for it several times, and reading it from `raw` each time
  // was half of a cycle with ten 10,000-task arrays pending. Like `raw`, not part of ==.
  std::optional<ArrayTaskOwner> arrayTask;
  SharedJson raw;  // the object as decoded; {} for a new one
  // The job's content: every field but `raw`.
  friend bool operator==(const SlurmJobObject& a, const SlurmJobObject& b);
};

// The generateName base for a job name, without the trailing '-' ("x" -> "x",
// "My Job_2" -> "my-job-2", "123" -> "job-123").
std::string generateNameBase(std::string_view jobName);

// A new SlurmJob for an sbatch invocation, with the defaults above filled in.
SlurmJobObject slurmJobFromInvocation(const slurm::SbatchInvocation& invocation,
                                      std::string namespaceName, std::string user);

nlohmann::json encodeSlurmJob(const SlurmJobObject& job);

// The most tasks the array of a decoded object may have: a decode refuses spec.array texts that
// name more. The cluster's MaxArraySize bounds them (each task id is below it), and it is a
// process setting here as it is the cluster's in slurm.conf: the operator sets its
// --max-array-size once at start, before it reads any object, so that an array the cluster
// refuses costs the caches what its text costs, not four million task ids. Never below 1: a
// task's own object names one id whatever the limit became since it was made. Readers that
// leave the judgement to the cluster (the CLI) keep the default, the largest slurm.conf allows.
void setDecodedArrayTaskLimit(std::uint32_t maxTasks);
std::uint32_t decodedArrayTaskLimit();

// The decode's error for a spec.array the cluster refuses, quoting (the start of) its text:
// "spec.array: invalid job array specification \"0-1001\"". For the arrays that decode but
// name a task past MaxArraySize, so that both read alike.
std::string invalidArrayProblem(std::string_view arrayText);

// Reads an object the API server returned (or one a user wrote). Errors name the field:
// "spec.timeLimit: invalid time limit \"xx\"". Never throws.
StatusOr<SlurmJobObject> decodeSlurmJob(const nlohmann::json& object);
// The same for an object nobody changes while the job lives (an informer's stored object): the
// job's `raw` shares it instead of copying it.
StatusOr<SlurmJobObject> decodeSlurmJob(std::shared_ptr<const nlohmann::json> object);

// decodeSlurmJob with `raw` left empty, for a caller that gives the job its own.
StatusOr<SlurmJobObject> decodeSlurmJobFields(const nlohmann::json& object);

// Removes from a SlurmJob object what its codec models (the spec and status members it reads
// and writes), keeping the whole metadata and what the codec passes through (status.conditions,
// spec.podTemplate, spec.rendezvous, spec.cancel, ...); a spec or status left empty goes too. A job
// decoded from the whole object and given the rest as its `raw` encodes as the job does with the
// whole object as `raw`, but for text of a modelled field that the codec writes its own way ("60"
// for a time limit the codec writes "01:00:00"): the SlurmJob cache keeps jobs so (cluster_view.h).
void dropModelledFields(nlohmann::json& object);

// The state the operator wrote (a long or short Slurm name); PENDING before it wrote one.
slurm::JobState jobStateOf(const SlurmJobStatus& status);

// spec.<key> of a job as decoded, or nullptr: the fields the codec does not model (spec.cancel,
// spec.podTemplate, spec.cancelTasks), which a cached job keeps in its raw JSON.
const nlohmann::json* specMember(const SlurmJobObject& job, std::string_view key);

// spec.cancelTasks of an array: the tasks `scancel A_T` cancelled before the operator made
// them, in sbatch --array's index syntax ("5,10-20"); the operator makes them cancelled. Not
// modelled by the codec (it stays in a cached job's raw, as spec.cancel does).
inline constexpr std::string_view kCancelTasksField = "cancelTasks";
// spec.splitTasks of an array: tasks not made yet that `scontrol hold|release|update A_T` named.
// The operator makes them at once, held, whatever its waiting window, so that the command
// reaches a SlurmJob of their own (slurmctld splits a task off its array's record so). The same
// syntax, not modelled either.
inline constexpr std::string_view kSplitTasksField = "splitTasks";
// The task ids of such a list (`field`), ascending; none when absent or not a valid index list
// (an id past the array's last task invalidates it).
std::vector<std::uint32_t> arrayTaskList(const SlurmJobObject& array, std::string_view field);
// arrayTaskList(array, kCancelTasksField).
std::vector<std::uint32_t> cancelledArrayTasks(const SlurmJobObject& array);

// The partition squeue, scontrol and sacct show for a job: the one it started in
// (status.partition) once it has, else what it asked for (sbatch -p a,b shows "a,b" while
// pending, as slurmctld's job record does), else `defaultPartition`.
std::string shownPartition(const SlurmJobObject& job, const std::string& defaultPartition);

// The partition whose DefaultTime a job without --time gets: the first it names (slurmctld sets
// the limit at submission), else `defaultPartition`.
std::string timeLimitPartition(const slurm::JobRequest& request,
                               const std::string& defaultPartition);

// The memory slurmctld records for a job (scontrol's MinMemory*, the TRES mem= of scontrol,
// squeue and sacct; job_get_tres_mem). The request's pn_min_memory is the job's --mem or
// --mem-per-cpu, else its first partition's DefMemPerNode or DefMemPerCPU (_validate_job_desc);
// 0 (none, --mem=0, --mem-per-cpu=0) is all of each node's memory, counted as `nodeMemoryMb`,
// the partition's first node's (_mem_per_node_part); unknown, no mem=. A --mem-per-gpu job
// without --mem* counts its GPUs' memory; a started job on a DefMemPerGPU partition, what
// cons_tres gave its GPUs.
struct RecordedMemory {
  std::uint64_t perNodeMb = 0;  // MinMemoryNode=
  std::uint64_t perCpuMb = 0;   // MinMemoryCPU= when set
  std::optional<std::uint64_t> tresMb;
};
RecordedMemory recordedMemory(const slurm::JobRequest& request, const PartitionMemory& partition,
                              bool started, std::int64_t nodes, std::int64_t cpus,
                              std::int64_t gpus, std::optional<std::uint64_t> nodeMemoryMb);

}  // namespace kubeslurm::api
