#include "kubeslurm/cli/array_task_lists.h"

#include <algorithm>
#include <string>

#include "kubeslurm/cli/job_objects.h"
#include "kubeslurm/kube/resource.h"
#include "kubeslurm/slurm/array_spec.h"

namespace kubeslurm::cli {

Status addArrayTasks(ClusterSession& session, const api::SlurmJobObject& array,
                     std::string_view field, const std::vector<std::uint32_t>& tasks) {
  api::SlurmJobObject current = array;
  Status failure = Status::ok();
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::vector<std::uint32_t> all = api::arrayTaskList(current, field);
    all.insert(all.end(), tasks.begin(), tasks.end());
    std::ranges::sort(all);
    all.erase(std::unique(all.begin(), all.end()), all.end());
    nlohmann::json body = {
        {"spec", {{std::string(field), slurm::formatArrayTasks(all, std::nullopt, 0)}}}};
    const std::string version = current.raw->value("metadata", nlohmann::json::object())
                                    .value("resourceVersion", std::string());
    if (!version.empty()) body["metadata"]["resourceVersion"] = version;
    auto patched =
        session.writer->patch(kube::resources::slurmJobs(), array.namespaceName, array.name, body);
    if (patched.isOk()) return Status::ok();
    failure = patched.status();
    if (failure.code() != StatusCode::kAborted) break;
    kube::ListOptions byName;
    byName.fieldSelector = "metadata.name=" + array.name;
    auto listed =
        kube::listAll(*session.reader, kube::resources::slurmJobs(), array.namespaceName, byName);
    if (!listed.isOk()) return listed.status();
    std::vector<api::SlurmJobObject> found = decodeJobList(*listed);
    if (found.empty()) break;
    current = std::move(found.front());
  }
  return failure;
}

}  // namespace kubeslurm::cli
