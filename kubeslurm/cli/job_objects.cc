#include "kubeslurm/cli/job_objects.h"

#include <algorithm>
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
    if (p.spec.isDefault && out.defaultPartition.empty()) out.defaultPartition = p.metadata.name;
  }
  if (out.defaultPartition.empty() && partitions.size() == 1) {
    out.defaultPartition = partitions.front().metadata.name;
  }
  return out;
}

}  // namespace kubeslurm::cli
