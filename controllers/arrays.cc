#include "controllers/arrays.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <utility>

#include "controllers/job_object.h"
#include "controllers/job_status.h"
#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/api/meta_v1.h"
#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/slurm/names.h"

namespace kubeslurm::controllers {

namespace {

using nlohmann::json;

template <typename Int>
std::optional<Int> parseDecimal(std::string_view text) {
  Int value{};
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return value;
}

std::optional<slurm::JobState> stateOf(const api::SlurmJobObject& task) {
  if (!task.status || !task.status->jobId) return std::nullopt;
  if (task.status->state.empty()) return slurm::JobState::kPending;
  return slurm::parseJobState(task.status->state);
}

// "N:S" -> (N, S); a malformed text counts as 0:0.
std::pair<std::int64_t, std::int64_t> exitCodeOf(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) return {0, 0};
  const std::string_view view(text);
  return {parseDecimal<std::int64_t>(view.substr(0, colon)).value_or(0),
          parseDecimal<std::int64_t>(view.substr(colon + 1)).value_or(0)};
}

void setState(api::SlurmJobStatus& status, slurm::JobState state) {
  status.state = std::string(slurm::jobStateName(state));
  status.stateCode = std::string(slurm::jobStateShortName(state));
}

}  // namespace

std::optional<ArrayTaskRef> arrayTaskOf(const api::SlurmJobObject& job) {
  // Tasks carry a spec.array: anything without one is no task. The codec read the rest from the
  // metadata once (SlurmJobObject::arrayTask): this runs for every job several times a cycle.
  if (!job.request.array || !job.arrayTask) return std::nullopt;
  return ArrayTaskRef{job.arrayTask->arrayName, job.arrayTask->arrayUid, job.arrayTask->taskId};
}

bool isArrayParent(const api::SlurmJobObject& job) {
  return job.request.array && !arrayTaskOf(job);
}

std::string arrayTaskName(std::string_view arrayName, std::uint32_t taskId) {
  std::string name(arrayName);
  name.push_back('-');
  name += std::to_string(taskId);
  return name;
}

json arrayTaskObject(const api::SlurmJobObject& array, std::uint32_t taskId) {
  const api::ObjectMeta parent = jobMetadata(array);
  json labels = json::object();
  for (const auto& [key, value] : parent.labels) labels[key] = value;
  labels[std::string(kArrayJobLabel)] = array.name;
  labels[std::string(kArrayTaskLabel)] = std::to_string(taskId);
  json annotations = json::object();
  if (array.status && array.status->jobId) {
    annotations[std::string(kArrayJobIdAnnotation)] = std::to_string(*array.status->jobId);
  }
  if (array.status && array.status->submitTime) {
    annotations[std::string(kArraySubmitTimeAnnotation)] =
        std::to_string(*array.status->submitTime);
  }
  // No blockOwnerDeletion: deleting an array need not wait for its tasks, and setting it would
  // need update on slurmjobs/finalizers where OwnerReferencesPermissionEnforcement is on.
  json owner = {{"apiVersion", std::string(api::kSlurmJobApiVersion)},
                {"kind", std::string(api::kSlurmJobKind)},
                {"name", array.name},
                {"uid", parent.uid},
                {"controller", true}};
  // The array's spec as its codec writes it: a cached array's `raw` holds only what the codec
  // does not model (holdSlurmJob, cluster_view.h).
  json spec = api::encodeSlurmJob(array)["spec"];
  // No copy of the script: a 1 MiB script in a 1,000-task array would be 1 GB in etcd. The
  // task's gang reads its array's (gangFor), as Slurm's tasks share their array's script.
  spec.erase("script");
  // Its own index and the array's throttle, not the array's whole list: decoded, a 10,000-task
  // spec is 40 KB of ids in every task the cache holds. What a task needs of the whole list
  // (SLURM_ARRAY_TASK_COUNT/MIN/MAX/STEP) its gang reads from its array (gangForStart).
  std::string own = std::to_string(taskId);
  if (array.request.array && array.request.array->maxRunning) {
    own += "%" + std::to_string(*array.request.array->maxRunning);
  }
  spec["array"] = own;
  return json{{"apiVersion", std::string(api::kSlurmJobApiVersion)},
              {"kind", std::string(api::kSlurmJobKind)},
              {"metadata",
               {{"name", arrayTaskName(array.name, taskId)},
                {"namespace", array.namespaceName},
                {"labels", labels},
                {"annotations", annotations},
                {"ownerReferences", json::array({owner})}}},
              {"spec", spec}};
}

std::map<std::string, ArrayFamily> arrayFamilies(std::span<const api::SlurmJobObject* const> jobs) {
  std::map<std::string, ArrayFamily> families;
  std::vector<std::pair<std::string, const api::SlurmJobObject*>> tasks;
  for (const api::SlurmJobObject* job : jobs) {
    if (!job->request.array) continue;
    if (auto task = arrayTaskOf(*job)) {
      tasks.emplace_back(job->namespaceName + "/" + task->arrayName, job);
    } else {
      families[job->namespaceName + "/" + job->name].array = job;
    }
  }
  for (const auto& [key, job] : tasks) {
    auto family = families.find(key);
    if (family == families.end()) continue;
    family->second.tasks.emplace(arrayTaskOf(*job)->taskId, job);
  }
  return families;
}

std::vector<std::uint32_t> missingTasks(const ArrayFamily& family) {
  std::vector<std::uint32_t> missing;
  if (family.array == nullptr || !family.array->request.array) return missing;
  for (std::uint32_t id : family.array->request.array->taskIds) {
    if (!family.tasks.contains(id)) missing.push_back(id);
  }
  return missing;
}

std::vector<std::uint32_t> tasksToMake(const ArrayFamily& family, bool arrayCancelled,
                                       const std::vector<std::uint32_t>& cancelledTasks,
                                       const std::vector<std::uint32_t>& splitTasks,
                                       std::size_t waitingLimit) {
  std::size_t waiting = 0;
  for (const auto& [index, task] : family.tasks) {
    const std::optional<slurm::JobState> state = stateOf(*task);
    if ((!state || *state == slurm::JobState::kPending) && !cancelRequested(*task)) ++waiting;
  }
  std::vector<std::uint32_t> make;
  for (const std::uint32_t task : missingTasks(family)) {
    if (arrayCancelled || std::ranges::binary_search(cancelledTasks, task) ||
        std::ranges::binary_search(splitTasks, task)) {
      make.push_back(task);
    } else if (waiting < waitingLimit) {
      make.push_back(task);
      ++waiting;
    }
  }
  return make;
}

json taskObjectFor(const api::SlurmJobObject& array, std::uint32_t taskId, bool arrayCancelled,
                   const std::vector<std::uint32_t>& cancelledTasks,
                   const std::vector<std::uint32_t>& splitTasks) {
  json object = arrayTaskObject(array, taskId);
  if (arrayCancelled || std::ranges::binary_search(cancelledTasks, taskId)) {
    object["spec"]["cancel"] = true;
  } else if (std::ranges::binary_search(splitTasks, taskId)) {
    object["spec"]["hold"] = true;
  }
  return object;
}

std::vector<ArrayExpansion> planArrayExpansions(const std::map<std::string, ArrayFamily>& families,
                                                const std::set<std::string>& skip,
                                                std::size_t tasksPerCycle,
                                                std::size_t waitingTasks) {
  std::vector<ArrayExpansion> out;
  std::size_t budget = tasksPerCycle;
  for (const auto& [key, family] : families) {
    const api::SlurmJobObject& array = *family.array;
    if (!array.status || !array.status->jobId || skip.contains(key)) continue;
    ArrayExpansion e;
    e.family = &family;
    e.key = key;
    const nlohmann::json* created =
        api::findCondition(api::conditionsOf(*array.raw), kTasksCreatedCondition);
    e.allCreated = created != nullptr && api::stringMember(*created, "status") == "True";
    const bool cancel = cancelRequested(array);
    const std::vector<std::uint32_t> cancelled = api::cancelledArrayTasks(array);
    if (!e.allCreated && !jobMetadata(array).deletionTimestamp) {
      e.createsTasks = true;
      e.missing = missingTasks(family).size();
      const std::vector<std::uint32_t> split = api::arrayTaskList(array, api::kSplitTasksField);
      for (const std::uint32_t task : tasksToMake(family, cancel, cancelled, split, waitingTasks)) {
        if (budget == 0) break;
        --budget;
        e.creates.emplace_back(task, taskObjectFor(array, task, cancel, cancelled, split));
      }
    }
    for (const auto& [index, task] : family.tasks) {
      if (!cancel && !std::ranges::binary_search(cancelled, index)) continue;
      const auto state = task->status ? slurm::parseJobState(task->status->state) : std::nullopt;
      if (cancelRequested(*task) || (state && slurm::isFinished(*state))) continue;
      e.cancels.push_back(task);
    }
    out.push_back(std::move(e));
  }
  return out;
}

api::SlurmJobStatus arrayStatus(const ArrayFamily& family, bool allCreated) {
  api::SlurmJobStatus status;
  if (family.array->status) {
    status.jobId = family.array->status->jobId;
    status.submitTime = family.array->status->submitTime;
    status.restarts = family.array->status->restarts;
  }
  status.arrayJobId = status.jobId;
  const std::size_t indexes =
      family.array->request.array ? family.array->request.array->taskIds.size() : 0;
  const std::size_t taskCount = allCreated ? family.tasks.size() : indexes;
  bool allEnded = family.tasks.size() == taskCount;
  const api::SlurmJobObject* firstPending = nullptr;
  const api::SlurmJobObject* firstUnsuccessful = nullptr;
  std::optional<slurm::JobState> unsuccessfulState;
  bool running = false;
  std::pair<std::int64_t, std::int64_t> highestExit{0, 0};
  std::string highestExitText = "0:0";
  for (const auto& [index, task] : family.tasks) {
    const std::optional<slurm::JobState> state = stateOf(*task);
    const bool ended = state && slurm::isFinished(*state);
    allEnded = allEnded && ended;
    if (!state) continue;
    const api::SlurmJobStatus& s = *task->status;
    if (*state == slurm::JobState::kRunning) {
      running = true;
      if (s.startTime && (!status.startTime || *s.startTime < *status.startTime)) {
        status.startTime = s.startTime;
      }
    }
    if ((*state == slurm::JobState::kPending || *state == slurm::JobState::kRequeued) &&
        firstPending == nullptr) {
      firstPending = task;
    }
    if (ended) {
      if (s.startTime && (!status.startTime || *s.startTime < *status.startTime)) {
        status.startTime = s.startTime;
      }
      if (s.endTime && (!status.endTime || *s.endTime > *status.endTime)) {
        status.endTime = s.endTime;
      }
      if (*state != slurm::JobState::kCompleted && firstUnsuccessful == nullptr) {
        firstUnsuccessful = task;
        unsuccessfulState = state;
      }
      const auto code = exitCodeOf(s.exitCode);
      if (code > highestExit) {
        highestExit = code;
        highestExitText = s.exitCode;
      }
    }
  }
  if (allEnded && taskCount > 0) {
    setState(status,
             firstUnsuccessful == nullptr ? slurm::JobState::kCompleted : *unsuccessfulState);
    status.reason = std::string(slurm::pendingReasonName(slurm::PendingReason::kNone));
    status.exitCode = highestExitText;
    return status;
  }
  status.endTime.reset();
  if (running) {
    setState(status, slurm::JobState::kRunning);
    status.reason = std::string(slurm::pendingReasonName(slurm::PendingReason::kNone));
    return status;
  }
  setState(status, slurm::JobState::kPending);
  status.startTime.reset();
  if (firstPending != nullptr) {
    const api::SlurmJobStatus& s = *firstPending->status;
    status.reason = s.reason;
    status.reasonDetail = s.reasonDetail;
    status.estimatedStart = s.estimatedStart;
    status.priority = s.priority;
  } else {
    status.reason = std::string(slurm::pendingReasonName(slurm::PendingReason::kNone));
  }
  return status;
}

}  // namespace kubeslurm::controllers
