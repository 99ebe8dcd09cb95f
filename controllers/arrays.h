// Job arrays (sbatch --array): one SlurmJob per task, owned by the array's own SlurmJob. PURE:
// no I/O, no clock.
//
// The array's object (spec.array set, no task label) gets the ArrayJobId as its status.jobId and
// is never scheduled itself: it is the record `scontrol show job <ArrayJobId>` and `scancel
// <ArrayJobId>` reach, and its status sums up its tasks. The reconciler creates one child
// SlurmJob per task index, `<array>-<index>`, with the array's spec but not its script (a task's
// gang reads its array's: admission.cc gangFor) and with spec.array naming only the task's index
// and the throttle (its gang reads the array's task list for SLURM_ARRAY_TASK_*), labels that name
// the array and the index, the ArrayJobId and the array's submit time as annotations, and an owner
// reference (controller) to the array, so that deleting the array deletes its tasks. A child is an
// ordinary job from then on: its own job id, priority, gang and status; the core's arrayMaxRunning
// applies the %N throttle across the children of one ArrayJobId.
//
// Slurm keeps a pending array as one record and splits a task off when it starts. Here at most
// ReconcilerOptions::arrayWaitingTasks made tasks of an array wait at once (tasksToMake); the
// rest wait in the array's record, which the CLI shows as their pending record
// (cli/job_objects.h) and the snapshot lists as unplanned. Where this differs from Slurm
// (docs/operator.md): a task gets its own id when it is made, not when it starts, and the
// array's record keeps the ArrayJobId for good (Slurm's last task takes it). What squeue shows
// (`6_[2-7%2]`, `6_0`) is Slurm's.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/core/model.h"

namespace kubeslurm::controllers {

// On a task: the array's metadata.name, and the task's index (decimal).
// (api/slurmjob.h's, which the codec reads into SlurmJobObject::arrayTask.)
inline constexpr std::string_view kArrayJobLabel = api::kArrayJobLabel;
inline constexpr std::string_view kArrayTaskLabel = api::kArrayTaskLabel;
// On a task: the ArrayJobId, and the array's submit time (Unix seconds), both decimal.
inline constexpr std::string_view kArrayJobIdAnnotation = "kubeslurm.io/array-job-id";
inline constexpr std::string_view kArraySubmitTimeAnnotation = "kubeslurm.io/array-submit-time";

struct ArrayTaskRef {
  std::string arrayName;  // the array's metadata.name, in the task's namespace
  std::string arrayUid;   // its uid, from the task's controller reference
  std::uint32_t taskId = 0;
};

// The task a SlurmJob is: labels that name the array and the index, and a controller reference
// to a SlurmJob of that name (security review H2: labels and annotations a tenant can write are
// not enough). The ArrayJobId and the submit time are the array's own status, never the task's
// annotations (which only say, for people, what the operator copied). nullopt for any other job.
std::optional<ArrayTaskRef> arrayTaskOf(const api::SlurmJobObject& job);

// An array's own object: spec.array set, and not one of its tasks.
bool isArrayParent(const api::SlurmJobObject& job);

// "<array>-<index>": the task's metadata.name.
std::string arrayTaskName(std::string_view arrayName, std::uint32_t taskId);

// The child SlurmJob for `taskId` of `array` (which has its job id): the array's spec without
// spec.script and with spec.array "<taskId>[%N]", its labels plus the task's, the annotations
// above, and an owner reference to the array.
nlohmann::json arrayTaskObject(const api::SlurmJobObject& array, std::uint32_t taskId);

// One array and the tasks that exist, by index.
struct ArrayFamily {
  const api::SlurmJobObject* array = nullptr;
  std::map<std::uint32_t, const api::SlurmJobObject*> tasks;
};

// Arrays by "ns/name", with their tasks; tasks whose array is not among `jobs` are left out (the
// garbage collector deletes them with their owner).
std::map<std::string, ArrayFamily> arrayFamilies(std::span<const api::SlurmJobObject* const> jobs);
// The same over a vector or SharedList of jobs: the families point into `jobs`.
template <typename Jobs>
std::map<std::string, ArrayFamily> arrayFamilies(const Jobs& jobs) {
  std::vector<const api::SlurmJobObject*> all;
  all.reserve(jobs.size());
  for (const api::SlurmJobObject& job : jobs) all.push_back(&job);
  return arrayFamilies(std::span<const api::SlurmJobObject* const>(all));
}

// The task indexes of the array that have no SlurmJob yet.
std::vector<std::uint32_t> missingTasks(const ArrayFamily& family);

// The tasks to make now, ascending: as Slurm keeps a pending array's tasks in one record and
// splits a task off when it starts, an array has at most `waitingLimit` made tasks waiting
// (pending, or without an id yet, and not cancelled); the tasks scancel cancelled before they
// were made (`cancelledTasks`, spec.cancelTasks; every task of a cancelled array) are made at
// once, cancelled, since they end at once; and so are the tasks scontrol split off
// (`splitTasks`, spec.splitTasks), held, for the command to reach (taskObjectFor).
std::vector<std::uint32_t> tasksToMake(const ArrayFamily& family, bool arrayCancelled,
                                       const std::vector<std::uint32_t>& cancelledTasks,
                                       const std::vector<std::uint32_t>& splitTasks,
                                       std::size_t waitingLimit);

// The object arrayTaskObject makes for `taskId`, cancelled when the array or the task was
// (`cancelledTasks`), else held when scontrol split it off (`splitTasks`): held until the
// command that asked for it has changed it, or a start could come first.
nlohmann::json taskObjectFor(const api::SlurmJobObject& array, std::uint32_t taskId,
                             bool arrayCancelled, const std::vector<std::uint32_t>& cancelledTasks,
                             const std::vector<std::uint32_t>& splitTasks);

// The array's condition, True once every task has been created: from then on a task that is
// gone (deleted by hand) is not created again, and the array ends when the tasks left end.
inline constexpr std::string_view kTasksCreatedCondition = "TasksCreated";

// One array's part of a cycle, which the reconciler sends: the tasks to make (their objects) and
// the made tasks to cancel. Its status is arrayStatus's once those writes are done.
struct ArrayExpansion {
  const ArrayFamily* family = nullptr;
  std::string key;            // "ns/name"
  bool allCreated = false;    // the TasksCreated condition was True as read
  bool createsTasks = false;  // not all created yet, and the array is not being deleted
  std::size_t missing = 0;    // tasks without a SlurmJob, as read
  std::vector<std::pair<std::uint32_t, nlohmann::json>> creates;  // task id, object
  std::vector<const api::SlurmJobObject*> cancels;                // made tasks: spec.cancel
};

// Every array's expansion (arrays with an id, in key order), but those `skip` names (written
// this cycle: their cached objects are stale). Tasks are made until all have been once (one
// deleted by hand afterwards stays deleted, as Slurm has no way back for a task either; an array
// being deleted gets none), at most `tasksPerCycle` over all arrays, as tasksToMake says with
// `waitingTasks`; a cancelled array still gets every task, created cancelled, so that each ends
// CANCELLED and a dependency sees the array end. The array's cancel, and spec.cancelTasks, reach
// the made tasks that have not ended or been asked already.
std::vector<ArrayExpansion> planArrayExpansions(const std::map<std::string, ArrayFamily>& families,
                                                const std::set<std::string>& skip,
                                                std::size_t tasksPerCycle,
                                                std::size_t waitingTasks);

// The array's status, summed up from its tasks (the array's own status gives the id and submit
// time). `allCreated`: the TasksCreated condition was True as read, so the tasks there are all
// there will be; else every index of the array counts, created or not.
//   - a task RUNNING: RUNNING, from the earliest task start;
//   - every task ended: COMPLETED when all completed, else the state of the first task (by
//     index) that did not; the exit code is the highest of any task (sbatch --wait's rule for
//     arrays); ended at the last task's end;
//   - else PENDING with the reason, estimated start and priority of the lowest pending task
//     (JobArrayTaskLimit under a %N throttle), or None before the tasks have ids.
api::SlurmJobStatus arrayStatus(const ArrayFamily& family, bool allCreated);

}  // namespace kubeslurm::controllers
