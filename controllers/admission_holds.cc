#include "controllers/admission_holds.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "controllers/arrays.h"
#include "controllers/job_object.h"
#include "kubeslurm/slurm/names.h"

namespace kubeslurm::controllers {
namespace {

bool pendingWithId(const api::SlurmJobObject& job) {
  if (!job.status || !job.status->jobId) return false;
  return job.status->state.empty() ||
         job.status->state == slurm::jobStateName(slurm::JobState::kPending);
}

// The job's Valid condition says the API server refused its pods at this generation.
std::optional<JobProblem> refusalOnRecord(const api::SlurmJobObject& job, std::int64_t generation) {
  if (!job.raw->is_object()) return std::nullopt;
  const auto status = job.raw->find("status");
  if (status == job.raw->end() || !status->is_object()) return std::nullopt;
  const auto conditions = status->find("conditions");
  if (conditions == status->end() || !conditions->is_array()) return std::nullopt;
  for (const api::Json& condition : *conditions) {
    if (api::stringMember(condition, "type") != "Valid" ||
        api::stringMember(condition, "status") != "False" ||
        api::stringMember(condition, "reason") != kInvalidPodSpecReason) {
      continue;
    }
    const auto observed = condition.find("observedGeneration");
    if (observed == condition.end() || !observed->is_number_integer() ||
        observed->get<std::int64_t>() != generation) {
      return std::nullopt;
    }
    return JobProblem{jobKey(job), std::string(kInvalidPodSpecReason),
                      api::stringMember(condition, "message")};
  }
  return std::nullopt;
}

}  // namespace

bool refusedAsWritten(const Status& cause) {
  if (cause.code() == StatusCode::kInvalidArgument) return true;  // 400, 422
  // Pod Security admission refuses with 403 "violates PodSecurity"; other 403s (our own RBAC,
  // an exceeded quota) may pass once an administrator acts.
  return cause.code() == StatusCode::kPermissionDenied &&
         cause.message().find("violates PodSecurity") != std::string::npos;
}

JobHolds AdmissionHolds::holdsFor(const ClusterObjects& objects, core::Time now,
                                  const PodCheck& check) {
  JobHolds holds;
  std::set<std::string> live;
  for (const api::SlurmJobObject& job : objects.jobs) {
    const std::string key = jobKey(job);
    live.insert(key);
    if (!pendingWithId(job) || isArrayParent(job)) continue;
    const api::ObjectMeta meta = jobMetadata(job);

    if (auto refused = refusals_.find(key); refused != refusals_.end()) {
      if (refused->second.uid == meta.uid && refused->second.generation == meta.generation) {
        holds.invalid.emplace(key, refused->second.problem);
        continue;
      }
      refusals_.erase(refused);  // the spec changed: try it again
    }
    if (auto onRecord = refusalOnRecord(job, meta.generation)) {
      holds.invalid.emplace(key, std::move(*onRecord));
      continue;
    }

    // A job that names several partitions (sbatch -p a,b) must be one each of them can run,
    // as the admission webhook required when it was submitted.
    const std::vector<const api::Partition*> partitions =
        jobPartitions(job.request, objects.partitions, nullptr);
    if (!partitions.empty()) {
      std::string versions;
      for (const api::Partition* partition : partitions) {
        versions.append(partition->metadata.name)
            .append("@")
            .append(partition->metadata.resourceVersion)
            .append(",");
      }
      Check& cached = checks_[key];
      if (cached.uid != meta.uid || cached.generation != meta.generation ||
          cached.partitions != versions) {
        cached = Check{meta.uid, meta.generation, std::move(versions), Status::ok()};
        for (const api::Partition* partition : partitions) {
          cached.result = check(job, *partition);
          if (!cached.result.isOk()) break;
        }
      }
      if (!cached.result.isOk()) {
        holds.invalid.emplace(key, JobProblem{key, std::string(kInvalidPodSpecReason),
                                              std::string(cached.result.message())});
        continue;
      }
    }
    if (auto backoff = backoffs_.find(key);
        backoff != backoffs_.end() && backoff->second.retryAfter > now) {
      holds.retryAfter.emplace(key, backoff->second.retryAfter);
    }
  }
  std::erase_if(checks_, [&](const auto& entry) { return !live.contains(entry.first); });
  std::erase_if(backoffs_, [&](const auto& entry) { return !live.contains(entry.first); });
  std::erase_if(refusals_, [&](const auto& entry) { return !live.contains(entry.first); });
  return holds;
}

std::optional<JobProblem> AdmissionHolds::failed(const api::SlurmJobObject& job,
                                                 const Status& cause, core::Time now) {
  const std::string key = jobKey(job);
  if (refusedAsWritten(cause)) {
    const api::ObjectMeta meta = jobMetadata(job);
    JobProblem problem{key, std::string(kInvalidPodSpecReason), std::string(cause.message())};
    refusals_[key] = Refusal{meta.uid, meta.generation, problem};
    backoffs_.erase(key);
    return problem;
  }
  Backoff& backoff = backoffs_[key];
  // 10 s, 20 s, 40 s ... 5 min: long enough for a flapping API server to recover, short enough
  // that a job is not held much past the cause.
  core::Duration delay = kFirstAdmissionRetry;
  for (std::uint32_t i = 0; i < backoff.failures && delay < kLastAdmissionRetry; ++i) delay *= 2;
  backoff.failures = std::min<std::uint32_t>(backoff.failures + 1, 32);
  backoff.retryAfter = now + std::min(delay, kLastAdmissionRetry);
  return std::nullopt;
}

void AdmissionHolds::succeeded(const std::string& key) { backoffs_.erase(key); }

void AdmissionHolds::reset() {
  checks_.clear();
  backoffs_.clear();
  refusals_.clear();
}

}  // namespace kubeslurm::controllers
