#include "controllers/job_object.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "kubeslurm/podspec/rank_pods.h"

namespace kubeslurm::controllers {

std::string podJobName(const api::Pod& pod) {
  for (const api::OwnerReference& owner : pod.metadata.ownerReferences) {
    if (owner.kind == api::kSlurmJobKind) return owner.name;
  }
  auto it = pod.metadata.labels.find(std::string(podspec::kJobNameLabel));
  return it == pod.metadata.labels.end() ? std::string() : it->second;
}

std::string jobKey(const api::SlurmJobObject& job) { return job.namespaceName + "/" + job.name; }

api::ObjectMeta jobMetadata(const api::SlurmJobObject& job) {
  if (job.raw->is_object()) {
    const auto& members = job.raw->get_ref<const api::Json::object_t&>();
    if (auto it = members.find("metadata"); it != members.end()) {
      auto meta = api::decodeObjectMeta(it->second);
      if (meta.isOk()) return std::move(meta).value();
    }
  }
  api::ObjectMeta meta;
  meta.name = job.name;
  meta.namespaceName = job.namespaceName;
  return meta;
}

bool isRankPod(const api::Pod& pod) { return !podJobName(pod).empty(); }

std::vector<std::string_view> partitionNames(std::string_view list) {
  std::vector<std::string_view> names;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    if (comma != 0) names.push_back(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return names;
}

std::vector<const api::Partition*> jobPartitions(const slurm::JobRequest& request,
                                                 const std::vector<api::Partition>& partitions,
                                                 std::string* message) {
  std::vector<const api::Partition*> out;
  if (!request.partition.empty()) {
    const auto byName = [&](std::string_view name) -> const api::Partition* {
      for (const api::Partition& p : partitions) {
        if (p.metadata.name == name) return &p;
      }
      return nullptr;
    };
    for (const std::string_view name : partitionNames(request.partition)) {
      const api::Partition* found = byName(name);
      if (found == nullptr) {
        // slurmctld's ESLURM_INVALID_PARTITION_NAME, with the name it could not find.
        if (message != nullptr) *message = "Invalid partition name specified: " + std::string(name);
        return {};
      }
      if (std::ranges::find(out, found) == out.end()) out.push_back(found);
    }
    if (out.empty() && message != nullptr) {
      *message = "Invalid partition name specified: " + request.partition;
    }
    return out;
  }
  const api::Partition* chosen = nullptr;
  for (const api::Partition& p : partitions) {
    if (p.spec.isDefault && (chosen == nullptr || p.metadata.name < chosen->metadata.name)) {
      chosen = &p;
    }
  }
  if (chosen == nullptr && partitions.size() == 1) chosen = &partitions.front();
  if (chosen == nullptr) {
    // ESLURM_DEFAULT_PARTITION_NOT_SET.
    if (message != nullptr) *message = "No partition specified or system default partition";
    return {};
  }
  out.push_back(chosen);
  return out;
}

const api::Partition* jobPartition(const slurm::JobRequest& request,
                                   const std::vector<api::Partition>& partitions,
                                   std::string* message) {
  const std::vector<const api::Partition*> named = jobPartitions(request, partitions, message);
  return named.empty() ? nullptr : named.front();
}

std::string submittedPartition(const slurm::JobRequest& request,
                               const std::vector<api::Partition>& partitions) {
  if (!request.partition.empty()) return request.partition;
  const api::Partition* chosen = jobPartition(request, partitions, nullptr);
  return chosen != nullptr ? chosen->metadata.name : std::string();
}

std::string admittedPartition(const api::Pod& rankPod) {
  const auto& annotations = rankPod.metadata.annotations;
  const auto it = annotations.find(std::string(podspec::kPartitionAnnotation));
  return it != annotations.end() ? it->second : std::string();
}

const api::Partition* runningPartition(const api::SlurmJobObject& job, std::string_view admittedIn,
                                       const std::vector<api::Partition>& partitions,
                                       std::string& name) {
  name = admittedIn;
  // While it waits its status holds the list it asked for (a,b), which names no partition.
  if (name.empty() && job.status && job.status->partition.find(',') == std::string::npos) {
    name = job.status->partition;
  }
  if (name.empty()) {
    const api::Partition* first = jobPartition(job.request, partitions, nullptr);
    if (first != nullptr) {
      name = first->metadata.name;
      return first;
    }
    const std::string& asked = job.request.partition;
    name = asked.substr(0, asked.find(','));
    return nullptr;
  }
  const auto found = std::ranges::find_if(
      partitions, [&](const api::Partition& p) { return p.metadata.name == name; });
  return found != partitions.end() ? &*found : nullptr;
}

std::string defaultAccountFor(const std::vector<api::Account>& accounts, const std::string& ns) {
  const api::Account* best = nullptr;
  for (const api::Account& a : accounts) {
    const auto& covered = a.spec.namespaces;
    if (std::find(covered.begin(), covered.end(), ns) == covered.end()) continue;
    if (best == nullptr || a.metadata.name < best->metadata.name) best = &a;
  }
  if (best != nullptr) return best->metadata.name;
  return accounts.empty() ? std::string() : std::string("root");
}

}  // namespace kubeslurm::controllers
