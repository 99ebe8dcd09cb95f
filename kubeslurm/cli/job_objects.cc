#include "kubeslurm/cli/job_objects.h"

#include <algorithm>
#include <set>
#include <vector>

#include "kubeslurm/api/kubeslurm_types.h"

namespace kubeslurm::cli {

std::vector<api::SlurmJobObject> decodeJobList(const kube::Json& list) {
  std::vector<api::SlurmJobObject> jobs;
  if (!list.contains("items") || !list["items"].is_array()) return jobs;
  for (const kube::Json& item : list["items"]) {
    auto job = api::decodeSlurmJob(item);
    if (job.isOk()) jobs.push_back(std::move(job).value());
  }
  return jobs;
}

AccountList decodeAccountList(const kube::Json& list) {
  AccountList out;
  if (!list.contains("items") || !list["items"].is_array()) return out;
  for (const kube::Json& item : list["items"]) {
    auto account = api::decodeAccount(item);
    if (account.isOk()) {
      out.accounts.push_back(std::move(account).value());
      continue;
    }
    const kube::Json* meta =
        item.is_object() && item.contains("metadata") ? &item["metadata"] : nullptr;
    std::string name =
        meta != nullptr && meta->is_object() ? meta->value("name", std::string("?")) : "?";
    out.leftOut.push_back({std::move(name), std::string(account.status().message())});
  }
  return out;
}

std::string labelOf(const api::SlurmJobObject& job, std::string_view key) {
  const nlohmann::json& raw = *job.raw;
  if (!raw.is_object() || !raw.contains("metadata") || !raw["metadata"].is_object()) return {};
  const nlohmann::json& meta = raw["metadata"];
  if (!meta.contains("labels") || !meta["labels"].is_object()) return {};
  const auto it = meta["labels"].find(std::string(key));
  return it != meta["labels"].end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool isArrayParent(const api::SlurmJobObject& job) {
  return job.request.array.has_value() && labelOf(job, "kubeslurm.io/array-task").empty();
}

std::map<std::int64_t, UnmadeTasks> unmadeArrayTasks(const std::vector<api::SlurmJobObject>& jobs) {
  std::map<std::int64_t, std::set<std::int64_t>> made;
  for (const api::SlurmJobObject& job : jobs) {
    if (!job.status || !job.status->jobId || !job.status->arrayJobId || !job.status->arrayTaskId ||
        isArrayParent(job)) {
      continue;
    }
    made[*job.status->arrayJobId].insert(*job.status->arrayTaskId);
  }
  std::map<std::int64_t, UnmadeTasks> out;
  for (const api::SlurmJobObject& job : jobs) {
    if (!job.status || !job.status->jobId || !isArrayParent(job)) continue;
    // A cancelled array's tasks are made cancelled (spec.cancel, which scancel sets): none of
    // them waits.
    const nlohmann::json* cancel = api::specMember(job, "cancel");
    if (cancel != nullptr && cancel->is_boolean() && cancel->get<bool>()) continue;
    const std::int64_t arrayId = *job.status->jobId;
    const std::set<std::int64_t>& tasks = made[arrayId];
    // Tasks scancel cancelled before they were made are made cancelled: none of them waits.
    const std::vector<std::uint32_t> cancelledTasks = api::cancelledArrayTasks(job);
    std::vector<std::uint32_t> unmade;
    for (const std::uint32_t task : job.request.array->taskIds) {
      if (!tasks.contains(task) && !std::ranges::binary_search(cancelledTasks, task)) {
        unmade.push_back(task);
      }
    }
    if (unmade.empty()) continue;

    std::ranges::sort(unmade);
    UnmadeTasks& entry = out[arrayId];
    entry.taskIds = std::move(unmade);
    entry.standIn = job;
    api::SlurmJobStatus& status = *entry.standIn.status;
    const bool arrayPending = api::jobStateOf(status) == slurm::JobState::kPending;
    status.state = std::string(slurm::jobStateName(slurm::JobState::kPending));
    status.stateCode = std::string(slurm::jobStateShortName(slurm::JobState::kPending));
    if (!arrayPending) {
      status.reason.clear();
      status.reasonDetail.clear();
    }
    status.nodeList.clear();
    status.startTime.reset();
    status.endTime.reset();
    status.exitCode.clear();
    status.arrayJobId = arrayId;
    status.arrayTaskId.reset();
  }
  return out;
}

PartitionDefaults partitionDefaults(const kube::Json& list) {
  std::vector<api::Partition> partitions;
  if (list.contains("items") && list["items"].is_array()) {
    for (const kube::Json& item : list["items"]) {
      auto partition = api::decodePartition(item);
      if (partition.isOk()) partitions.push_back(std::move(partition).value());
    }
  }
  std::ranges::sort(partitions, {}, [](const api::Partition& p) { return p.metadata.name; });
  PartitionDefaults out;
  for (const api::Partition& p : partitions) {
    out.defaultTime[p.metadata.name] = api::partitionDefaultTime(p.spec);
    out.memory[p.metadata.name] = api::partitionMemory(p.spec);
    if (p.spec.isDefault && out.defaultPartition.empty()) out.defaultPartition = p.metadata.name;
  }
  if (out.defaultPartition.empty() && partitions.size() == 1) {
    out.defaultPartition = partitions.front().metadata.name;
  }
  out.partitions = std::move(partitions);
  return out;
}

}  // namespace kubeslurm::cli
