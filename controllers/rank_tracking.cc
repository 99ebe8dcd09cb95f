#include "controllers/rank_tracking.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "controllers/job_object.h"
#include "kubeslurm/podspec/rank_pods.h"
#include "kubeslurm/slurm/names.h"

namespace kubeslurm::controllers {

namespace {

bool tracked(const api::Pod& pod) {
  const auto& f = pod.metadata.finalizers;
  return std::find(f.begin(), f.end(), podspec::kJobTrackingFinalizer) != f.end();
}

std::string ownerUid(const api::Pod& pod) {
  for (const api::OwnerReference& owner : pod.metadata.ownerReferences) {
    if (owner.kind == api::kSlurmJobKind) return owner.uid;
  }
  return "";
}

using GangKey = std::tuple<std::string, std::string, std::uint32_t>;  // ns, job, attempt

// Gangs whose every rank has a pod and every such pod is bound (deleting ones included: a gang
// deleted while no operator ran is still the gang that ran).
std::set<GangKey> wholeGangs(const SharedList<api::Pod>& pods) {
  struct Seen {
    std::uint32_t size = 0;
    std::set<std::uint32_t> ranks;
    bool allBound = true;
  };
  std::map<GangKey, Seen> seen;
  for (const api::Pod& pod : pods) {
    const auto attempt = podspec::bookkeepingNumber(pod.metadata.labels, podspec::kAttemptLabel);
    const auto rank = podspec::bookkeepingNumber(pod.metadata.labels, podspec::kRankLabel);
    if (!attempt || !rank) continue;
    Seen& gang = seen[{pod.metadata.namespaceName, podJobName(pod), *attempt}];
    if (auto size =
            podspec::bookkeepingNumber(pod.metadata.annotations, podspec::kGangSizeAnnotation)) {
      gang.size = std::max(gang.size, *size);
    }
    gang.ranks.insert(*rank);
    gang.allBound = gang.allBound && !pod.spec.nodeName.empty();
  }
  std::set<GangKey> whole;
  for (const auto& [key, gang] : seen) {
    if (gang.size > 0 && gang.ranks.size() == gang.size && gang.allBound) whole.insert(key);
  }
  return whole;
}

}  // namespace

std::optional<TrackingRelease> trackingRelease(const api::Pod& pod) {
  if (!tracked(pod)) return std::nullopt;
  TrackingRelease release;
  release.namespaceName = pod.metadata.namespaceName;
  release.name = pod.metadata.name;
  release.resourceVersion = pod.metadata.resourceVersion;
  for (const std::string& f : pod.metadata.finalizers) {
    if (f != podspec::kJobTrackingFinalizer) release.remaining.push_back(f);
  }
  return release;
}

std::vector<TrackingRelease> rankPodsToRelease(const SharedList<api::Pod>& pods,
                                               const SharedList<api::SlurmJobObject>& jobs) {
  std::map<std::pair<std::string, std::string>, const api::SlurmJobObject*> byName;
  for (const api::SlurmJobObject& job : jobs) byName[{job.namespaceName, job.name}] = &job;
  std::optional<std::set<GangKey>> whole;  // computed when a PENDING job needs it

  const auto claimed = [&](const api::Pod& pod, const std::string& jobName) {
    auto found = byName.find({pod.metadata.namespaceName, jobName});
    if (found == byName.end()) return false;
    const api::SlurmJobObject& job = *found->second;
    const std::string owner = ownerUid(pod);
    if (!owner.empty() && owner != jobMetadata(job).uid) return false;
    if (!job.status || pod.spec.nodeName.empty()) return false;
    const auto attempt = podspec::bookkeepingNumber(pod.metadata.labels, podspec::kAttemptLabel);
    if (!attempt || static_cast<std::int64_t>(*attempt) != job.status->restarts.value_or(0)) {
      return false;
    }
    const auto state = slurm::parseJobState(job.status->state);
    if (state == slurm::JobState::kRunning) return true;
    if (state != slurm::JobState::kPending) return false;
    if (!whole) whole = wholeGangs(pods);
    return whole->contains({pod.metadata.namespaceName, jobName, *attempt});
  };

  std::vector<TrackingRelease> out;
  for (const api::Pod& pod : pods) {
    if (!tracked(pod)) continue;
    if (!api::podIsTerminal(pod) && !pod.metadata.deletionTimestamp) continue;
    const std::string jobName = podJobName(pod);
    if (!jobName.empty() && claimed(pod, jobName)) continue;
    out.push_back(*trackingRelease(pod));
  }
  std::sort(out.begin(), out.end(), [](const TrackingRelease& a, const TrackingRelease& b) {
    return std::tie(a.namespaceName, a.name) < std::tie(b.namespaceName, b.name);
  });
  return out;
}

api::Json releasePatch(const TrackingRelease& release) {
  api::Json metadata = {{"resourceVersion", release.resourceVersion}};
  metadata["finalizers"] =
      release.remaining.empty() ? api::Json(nullptr) : api::Json(release.remaining);
  return {{"metadata", std::move(metadata)}};
}

}  // namespace kubeslurm::controllers
