#include "controllers/retention.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "controllers/arrays.h"
#include "controllers/job_object.h"
#include "kubeslurm/slurm/names.h"

namespace kubeslurm::controllers {

std::vector<const api::SlurmJobObject*> expiredJobs(const SharedList<api::SlurmJobObject>& jobs,
                                                    core::Time now, core::Duration retention,
                                                    const EndedRecordWritten& recorded) {
  std::vector<const api::SlurmJobObject*> expired;
  if (retention <= 0) return expired;
  // An array's tasks, found once, for the first array past its retention.
  std::optional<std::map<std::string, std::vector<const api::SlurmJobObject*>>> tasksOfArray;
  const auto kept = [&](const api::SlurmJobObject& job) {
    if (!recorded) return true;
    if (!recorded(job)) return false;
    if (!job.request.array) return true;
    if (!tasksOfArray) {
      tasksOfArray.emplace();
      for (const auto& [key, family] : arrayFamilies(jobs)) {
        for (const auto& [index, task] : family.tasks) (*tasksOfArray)[key].push_back(task);
      }
    }
    const auto tasks = tasksOfArray->find(jobKey(job));
    return tasks == tasksOfArray->end() ||
           std::ranges::all_of(tasks->second, [&recorded](const api::SlurmJobObject* task) {
             return recorded(*task);
           });
  };
  for (const api::SlurmJobObject& job : jobs) {
    if (!job.status || !job.status->endTime) continue;
    if (job.request.array && arrayTaskOf(job)) continue;
    const auto state = slurm::parseJobState(job.status->state);
    if (!state || !slurm::isFinished(*state)) continue;
    if (now - *job.status->endTime < retention) continue;
    if (!kept(job)) continue;
    expired.push_back(&job);
  }
  return expired;
}

}  // namespace kubeslurm::controllers
