#include "controllers/job_object.h"

#include <algorithm>
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
  if (job.raw.is_object()) {
    const auto& members = job.raw.get_ref<const api::Json::object_t&>();
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

const api::Partition* jobPartition(const slurm::JobRequest& request,
                                   const std::vector<api::Partition>& partitions,
                                   std::string* message) {
  if (!request.partition.empty()) {
    for (const api::Partition& p : partitions) {
      if (p.metadata.name == request.partition) return &p;
    }
    // slurmctld's ESLURM_INVALID_PARTITION_NAME, with the name it could not find.
    if (message != nullptr) {
      *message = "Invalid partition name specified: " + request.partition;
    }
    return nullptr;
  }
  const api::Partition* chosen = nullptr;
  for (const api::Partition& p : partitions) {
    if (p.spec.isDefault && (chosen == nullptr || p.metadata.name < chosen->metadata.name)) {
      chosen = &p;
    }
  }
  if (chosen == nullptr && partitions.size() == 1) chosen = &partitions.front();
  if (chosen == nullptr && message != nullptr) {
    // ESLURM_DEFAULT_PARTITION_NOT_SET.
    *message = "No partition specified or system default partition";
  }
  return chosen;
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
