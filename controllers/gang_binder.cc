#include "controllers/gang_binder.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <exception>
#include <optional>
#include <set>
#include <tuple>

#include <openssl/rand.h>

#include "controllers/job_object.h"
#include "kubeslurm/api/meta_v1.h"
#include "kubeslurm/base/text.h"
#include "kubeslurm/kube/run_bounded.h"
#include "kubeslurm/step/pod_contract.h"

namespace kubeslurm::controllers {

namespace {

// 256 bits: the step token is a bearer secret on the pod network.
constexpr std::size_t kStepTokenBytes = 32;

Status fenceClosed() {
  return {StatusCode::kAborted, "the leader-election fence is closed: not writing"};
}

std::string labelOf(const api::ObjectMeta& meta, std::string_view key) {
  auto it = meta.labels.find(std::string(key));
  return it == meta.labels.end() ? std::string() : it->second;
}

std::string annotationOf(const api::ObjectMeta& meta, std::string_view key) {
  auto it = meta.annotations.find(std::string(key));
  return it == meta.annotations.end() ? std::string() : it->second;
}

bool ownedBy(const api::ObjectMeta& meta, std::string_view uid) {
  return std::any_of(meta.ownerReferences.begin(), meta.ownerReferences.end(),
                     [uid](const api::OwnerReference& owner) { return owner.uid == uid; });
}

PodRef refOf(const api::Pod& pod) {
  return {pod.metadata.name, pod.metadata.uid, pod.spec.nodeName, api::podIsTerminal(pod),
          trackingRelease(pod)};
}

// This attempt of this job, as far as the labels and (when known) the owner say.
bool sameAttempt(const api::Pod& pod, const podspec::GangInput& gang) {
  if (labelOf(pod.metadata, podspec::kJobNameLabel) != gang.jobName) return false;
  if (labelOf(pod.metadata, podspec::kAttemptLabel) != std::to_string(gang.attempt)) return false;
  return gang.jobUid.empty() || ownedBy(pod.metadata, gang.jobUid);
}

std::string uidOf(const kube::Json& object) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return {};
  auto uid = meta->find("uid");
  return uid != meta->end() && uid->is_string() ? uid->get<std::string>() : std::string();
}

// What a rank needs, given the pod that already holds its name.
struct RankAction {
  bool bind = false;
  std::string uid;
};

StatusOr<RankAction> adoptExisting(const api::Pod& existing, const podspec::GangInput& gang,
                                   std::size_t rank) {
  const std::string& name = existing.metadata.name;
  if (!sameAttempt(existing, gang)) {
    return Status(StatusCode::kAlreadyExists,
                  "pod " + name + " exists and is not attempt " + std::to_string(gang.attempt) +
                      " of job " + gang.jobName +
                      " (job-name=" + labelOf(existing.metadata, podspec::kJobNameLabel) +
                      ", attempt=" + labelOf(existing.metadata, podspec::kAttemptLabel) + ")");
  }
  if (existing.metadata.deletionTimestamp) {
    return failedPrecondition("pod " + name + " of this attempt is being deleted");
  }
  if (podspec::rejectedByKubelet(existing)) {
    return failedPrecondition("pod " + name + " was rejected by the kubelet of " +
                              existing.spec.nodeName + ": " + existing.status.reason);
  }
  const std::string& planned = gang.nodes[rank];
  if (existing.spec.nodeName.empty()) {
    if (api::podIsTerminal(existing)) {
      return failedPrecondition("pod " + name + " ended (" + existing.status.phase +
                                ") without being bound");
    }
    return RankAction{true, existing.metadata.uid};
  }
  // Bound where planned: placed. Its phase is the job controller's business, not a reason to
  // tear down a gang that already ran.
  if (existing.spec.nodeName == planned) return RankAction{false, existing.metadata.uid};
  return failedPrecondition("pod " + name + " is bound to " + existing.spec.nodeName +
                            ", planned on " + planned);
}

Status withRollbackNote(const Status& cause, const Status& rollback) {
  if (rollback.isOk()) return cause;
  return {cause.code(), cause.message() + "; rollback incomplete: " + rollback.toString()};
}

kube::ListOptions jobSelector(std::string_view jobName) {
  kube::ListOptions options;
  options.labelSelector = std::string(podspec::kJobNameLabel) + "=" + std::string(jobName);
  return options;
}

StatusOr<std::vector<api::Pod>> decodePods(const kube::Json& list) {
  std::vector<api::Pod> pods;
  if (!list.contains("items") || !list["items"].is_array()) return pods;
  for (const kube::Json& item : list["items"]) {
    auto pod = api::decodePod(item);
    if (!pod.isOk()) return pod.status();
    pods.push_back(std::move(pod).value());
  }
  return pods;
}

void addDefect(std::vector<GangDefect>& defects, GangDefect defect) {
  if (std::find(defects.begin(), defects.end(), defect) == defects.end()) {
    defects.push_back(defect);
  }
}

}  // namespace

std::string_view admissionStepName(AdmissionStep step) {
  switch (step) {
    case AdmissionStep::kObjectsReady:
      return "objects-ready";
    case AdmissionStep::kPodCreated:
      return "pod-created";
    case AdmissionStep::kPodBound:
      return "pod-bound";
    case AdmissionStep::kGangBound:
      return "gang-bound";
  }
  return "unknown";
}

std::optional<AdmissionStep> parseAdmissionStep(std::string_view name) {
  for (AdmissionStep step : {AdmissionStep::kObjectsReady, AdmissionStep::kPodCreated,
                             AdmissionStep::kPodBound, AdmissionStep::kGangBound}) {
    if (admissionStepName(step) == name) return step;
  }
  return std::nullopt;
}

std::string_view gangDefectName(GangDefect defect) {
  switch (defect) {
    case GangDefect::kMissingRanks:
      return "MissingRanks";
    case GangDefect::kPartlyBound:
      return "PartlyBound";
    case GangDefect::kWrongNode:
      return "WrongNode";
    case GangDefect::kRejected:
      return "Rejected";
    case GangDefect::kStaleAttempt:
      return "StaleAttempt";
    case GangDefect::kMalformed:
      return "Malformed";
  }
  return "Unknown";
}

bool PartialGang::has(GangDefect defect) const {
  return std::find(defects.begin(), defects.end(), defect) != defects.end();
}

std::string PartialGang::describe() const {
  std::string text = namespaceName + "/" + jobName + " attempt " + std::to_string(attempt) + ":";
  for (std::size_t i = 0; i < defects.size(); ++i) {
    text += (i == 0 ? " " : ",");
    text += gangDefectName(defects[i]);
  }
  return text + " (" + std::to_string(pods.size()) + " pods)";
}

std::vector<PartialGang> findPartialGangs(std::span<const api::Pod> pods,
                                          const CurrentAttempts& current) {
  // -1 stands for an attempt label that does not parse: such pods form their own group so that
  // they do not taint a well-formed gang of attempt 0.
  using Key = std::tuple<std::string, std::string, std::int64_t>;
  std::map<Key, std::vector<const api::Pod*>> groups;
  std::map<std::pair<std::string, std::string>, std::uint32_t> newest;
  for (const api::Pod& pod : pods) {
    const std::string job = labelOf(pod.metadata, podspec::kJobNameLabel);
    if (job.empty()) continue;
    const auto attempt = podspec::bookkeepingNumber(pod.metadata.labels, podspec::kAttemptLabel);
    const std::int64_t attemptKey = attempt ? static_cast<std::int64_t>(*attempt) : -1;
    groups[{pod.metadata.namespaceName, job, attemptKey}].push_back(&pod);
    if (attempt) {
      auto [it, inserted] = newest.try_emplace({pod.metadata.namespaceName, job}, *attempt);
      if (!inserted) it->second = std::max(it->second, *attempt);
    }
  }

  std::vector<PartialGang> result;
  for (const auto& [key, members] : groups) {
    const auto& [ns, job, attemptKey] = key;
    PartialGang gang;
    gang.namespaceName = ns;
    gang.jobName = job;
    gang.attempt = attemptKey < 0 ? 0 : static_cast<std::uint32_t>(attemptKey);
    std::vector<GangDefect> defects;
    if (attemptKey < 0) addDefect(defects, GangDefect::kMalformed);

    // 0: unknown (missing, unparsable or disagreeing between ranks). A plain integer rather than
    // an optional: GCC 12 warns of maybe-uninitialized optional storage here.
    std::uint32_t size = 0;
    bool sizeConsistent = true;
    for (const api::Pod* pod : members) {
      const auto podSize =
          podspec::bookkeepingNumber(pod->metadata.annotations, podspec::kGangSizeAnnotation);
      if (!podSize || *podSize == 0 || (size != 0 && size != *podSize)) {
        sizeConsistent = false;
      } else {
        size = *podSize;
      }
    }
    if (!sizeConsistent || size == 0) {
      addDefect(defects, GangDefect::kMalformed);
      size = 0;
    }
    gang.gangSize = size;

    std::set<std::uint32_t> liveRanks;
    std::size_t runnable = 0;  // live and not finished: may run, or holds its node
    std::size_t live = 0;
    std::size_t bound = 0;
    for (const api::Pod* pod : members) {
      gang.pods.push_back(refOf(*pod));
      const auto rank = podspec::bookkeepingNumber(pod->metadata.labels, podspec::kRankLabel);
      if (!rank || (size != 0 && *rank >= size)) addDefect(defects, GangDefect::kMalformed);
      if (podspec::rejectedByKubelet(*pod)) addDefect(defects, GangDefect::kRejected);
      if (!pod->spec.nodeName.empty()) {
        const std::string planned = annotationOf(pod->metadata, podspec::kPlannedNodeAnnotation);
        if (planned.empty()) {
          addDefect(defects, GangDefect::kMalformed);
        } else if (planned != pod->spec.nodeName) {
          addDefect(defects, GangDefect::kWrongNode);
        }
      }
      if (pod->metadata.deletionTimestamp) continue;  // on its way out: not part of the gang
      if (!api::podIsTerminal(*pod)) ++runnable;
      ++live;
      if (rank) liveRanks.insert(*rank);
      if (!pod->spec.nodeName.empty()) ++bound;
    }
    if (size != 0 && liveRanks.size() < size) addDefect(defects, GangDefect::kMissingRanks);
    if (bound > 0 && bound < live) addDefect(defects, GangDefect::kPartlyBound);

    if (attemptKey >= 0) {
      const auto jobKey = std::make_pair(ns, job);
      auto known = current.find(jobKey);
      const bool behindJob = known != current.end() && gang.attempt < known->second;
      auto seen = newest.find(jobKey);
      const bool behindNewer = seen != newest.end() && gang.attempt < seen->second;
      if (behindJob || behindNewer) addDefect(defects, GangDefect::kStaleAttempt);
    }

    // Finished pods run nothing and hold no node: what is left of a finished gang (a script
    // job keeps rank 0 for its output) is the job controller's, not a gang to remove.
    if (defects.empty() || runnable == 0) continue;
    std::sort(defects.begin(), defects.end());
    gang.defects = std::move(defects);
    std::sort(gang.pods.begin(), gang.pods.end(),
              [](const PodRef& a, const PodRef& b) { return a.name < b.name; });
    result.push_back(std::move(gang));
  }
  return result;
}

GangBinder::GangBinder(kube::Reader& reader, kube::Writer& writer, kube::Binder& binder,
                       GangBinderOptions options)
    : reader_(reader), writer_(writer), binder_(binder), options_(std::move(options)) {}

bool GangBinder::fenceOpen() const { return !options_.canWrite || options_.canWrite(); }

void GangBinder::reached(AdmissionStep step) const {
  if (options_.reached) options_.reached(step);
}

// An object of the job's that is named after it (its Service, its NetworkPolicy): created if
// missing; one that exists must be the job's (owned by its uid, or labelled with its name where
// the job has no uid), else kAlreadyExists.
Status GangBinder::ensureOwned(const kube::ResourceType& type, const podspec::GangInput& gang,
                               const kube::Json& wanted, bool fresh) {
  const std::string name = api::stringMember(wanted["metadata"], "name");
  auto check = [&](const kube::Json& object) -> Status {
    auto meta = api::decodeObjectMeta(object.value("metadata", kube::Json::object()));
    if (!meta.isOk()) return meta.status();
    const bool ours = gang.jobUid.empty() ? labelOf(*meta, podspec::kJobNameLabel) == gang.jobName
                                          : ownedBy(*meta, gang.jobUid);
    if (ours) return Status::ok();
    std::string kind = api::stringMember(wanted, "kind");
    std::transform(kind.begin(), kind.end(), kind.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return {StatusCode::kAlreadyExists,
            kind + " " + name + " exists and is not owned by job " + gang.jobName};
  };
  // A fresh gang's objects are created first and read only when one exists (a requeue keeps
  // the Service): one write and no read in the common case. Otherwise read first, so that a
  // repeated admit of a gang that is whole writes nothing.
  if (!fresh) {
    auto got = reader_.get(type, gang.namespaceName, name);
    if (got.isOk()) return check(*got);
    if (got.status().code() != StatusCode::kNotFound) return got.status();
  }
  if (!fenceOpen()) return fenceClosed();
  auto created = writer_.create(type, gang.namespaceName, wanted);
  if (created.isOk()) return Status::ok();
  if (created.status().code() != StatusCode::kAlreadyExists) return created.status();
  // Someone made it before our create (or after our get): ours is fine, another's is not.
  auto got = reader_.get(type, gang.namespaceName, name);
  if (!got.isOk()) return got.status();
  return check(*got);
}

Status GangBinder::ensureService(const podspec::GangInput& gang, bool fresh) {
  return ensureOwned(kube::resources::services(), gang,
                     api::encodeService(podspec::jobService(gang)), fresh);
}

Status GangBinder::ensureNetworkPolicy(const podspec::GangInput& gang, bool fresh) {
  if (!gang.isolateNetwork) return Status::ok();
  return ensureOwned(kube::resources::networkPolicies(), gang, podspec::jobNetworkPolicy(gang),
                     fresh);
}

StatusOr<std::string> GangBinder::createStepTokenSecret(const podspec::GangInput& gang) {
  if (!fenceOpen()) return fenceClosed();
  std::string token;
  if (options_.stepToken) {
    token = options_.stepToken(gang);
  } else {
    std::array<unsigned char, kStepTokenBytes> bytes{};
    if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
      return internalError("no random bytes for the step token (OpenSSL RAND_bytes)");
    }
    token.reserve(bytes.size() * 2);
    constexpr std::string_view kHex = "0123456789abcdef";
    for (const unsigned char byte : bytes) {
      token.push_back(kHex[byte >> 4U]);
      token.push_back(kHex[byte & 0x0FU]);
    }
  }
  // generateName: the API server picks a name nobody holds, so no Secret planted in advance by
  // someone who may create Secrets in the namespace can stand in for ours (security review
  // M6). The operator may not read Secrets (least privilege) and never needs to: the name it
  // gets back is the one the attempt's pods mount.
  auto created = writer_.create(kube::resources::secrets(), gang.namespaceName,
                                podspec::stepTokenSecret(gang, token));
  if (!created.isOk()) return created.status();
  std::string name = api::stringMember(created->value("metadata", kube::Json::object()), "name");
  if (name.empty()) return internalError("the API server named no step-token Secret");
  return name;
}

namespace {

// The step-token Secret the attempt's existing rank pods mount: a repeated admit keeps the token
// its first admit made, so every rank of an attempt holds the same one. Only a pod with a rank's
// name counts: labels and owner references are anyone's to write who may create pods (the pod
// webhook refuses them, and this does not rely on it).
std::string stepSecretOf(const std::vector<api::Pod>& pods, const podspec::GangInput& gang) {
  std::set<std::string> rankNames;
  for (std::size_t rank = 0; rank < gang.nodes.size(); ++rank) {
    rankNames.insert(podspec::rankPodName(gang.jobName, static_cast<std::uint32_t>(rank)));
  }
  for (const api::Pod& pod : pods) {
    if (!rankNames.contains(pod.metadata.name) || !sameAttempt(pod, gang)) continue;
    const kube::Json spec = pod.raw.value("spec", kube::Json::object());
    for (const kube::Json& container : spec.value("containers", kube::Json::array())) {
      for (const kube::Json& var : container.value("env", kube::Json::array())) {
        if (api::stringMember(var, "name") != step::kStepTokenVariable) continue;
        const kube::Json ref = var.value("valueFrom", kube::Json::object())
                                   .value("secretKeyRef", kube::Json::object());
        std::string name = api::stringMember(ref, "name");
        if (name.starts_with(podspec::stepTokenSecretPrefix(gang.jobName))) return name;
      }
    }
  }
  return {};
}

}  // namespace

StatusOr<std::vector<api::Pod>> GangBinder::plannedPods(const podspec::GangInput& input) {
  if (input.nodes.empty()) return invalidArgument("a gang needs at least one node");
  podspec::GangInput gang = input;
  if (podspec::usesStepRuntime(gang) && gang.stepSecretName.empty()) {
    gang.stepSecretName = podspec::stepTokenSecretPrefix(gang.jobName) + "planned";
  }
  auto pods = podspec::rankPods(gang);
  if (!pods.isOk()) return pods.status();
  for (std::size_t rank = 0; rank < pods->size(); ++rank) {
    (*pods)[rank].spec.nodeName = gang.nodes[rank];
  }
  return pods;
}

StatusOr<std::string> readBatchScript(kube::Reader& reader, const std::string& namespaceName,
                                      const std::string& name, const std::string& uid) {
  auto object = reader.get(kube::resources::slurmJobs(), namespaceName, name);
  if (!object.isOk()) return object.status();
  auto job = api::decodeSlurmJob(*object);
  if (!job.isOk()) return job.status();
  if (jobMetadata(*job).uid != uid) {
    return Status(StatusCode::kAborted,
                  "SlurmJob " + namespaceName + "/" + name + " was replaced since it was planned");
  }
  return std::move(job->script);
}

Status GangBinder::admit(const podspec::GangInput& input, KnownPods known,
                         std::vector<api::Pod>* admitted) {
  if (!fenceOpen()) return fenceClosed();
  if (input.nodes.empty()) return invalidArgument("a gang needs at least one node");
  podspec::GangInput gang = input;
  if (!gang.podTemplate && gang.script == kScriptNotCached) {
    const bool ownScript = gang.scriptSourceName.empty();
    auto script = readBatchScript(reader_, gang.namespaceName,
                                  ownScript ? gang.jobName : gang.scriptSourceName,
                                  ownScript ? gang.jobUid : gang.scriptSourceUid);
    if (!script.isOk()) return script.status();
    gang.script = std::move(script).value();
  }
  const bool stepRuntime = podspec::usesStepRuntime(gang);
  const std::size_t ranks = gang.nodes.size();
  const bool fresh = known == KnownPods::kNone;

  // Observe first, so that a repeated admit writes only what is missing (invariant 3). A fresh
  // gang has nothing to observe: the caller's caches show none of its pods.
  std::vector<api::Pod> existingPods;
  if (!fresh) {
    auto listed = kube::listAll(reader_, kube::resources::pods(), gang.namespaceName,
                                jobSelector(gang.jobName));
    if (!listed.isOk()) return listed.status();
    auto decoded = decodePods(*listed);
    if (!decoded.isOk()) return decoded.status();
    existingPods = std::move(decoded).value();
  }
  if (stepRuntime) gang.stepSecretName = stepSecretOf(existingPods, gang);
  // The pods are checked before anything is written.
  if (auto made = plannedPods(gang); !made.isOk()) return made.status();
  // A fresh admission takes back what it created and nothing else: its caches showed no pod of
  // the job, but they may be behind a gang that runs (a 409 on a rank's name is one way to find
  // out). An observed one rolls the whole attempt back.
  std::vector<std::optional<PodRef>> createdRefs(ranks);
  const auto fail = [&](const Status& cause) -> Status {
    if (!fresh) return rollbackAfterFailure(gang, cause);
    std::vector<PodRef> mine;
    for (std::optional<PodRef>& ref : createdRefs) {
      if (ref) mine.push_back(std::move(*ref));
    }
    if (mine.empty()) return cause;
    ++rollbacks_;
    if (!fenceOpen()) return withRollbackNote(cause, fenceClosed());
    return withRollbackNote(cause, deletePods(gang.namespaceName, mine));
  };
  std::map<std::string, const api::Pod*> existing;
  for (const api::Pod& pod : existingPods) existing[pod.metadata.name] = &pod;

  std::vector<RankAction> actions(ranks);
  std::vector<bool> needsCreate(ranks, false);
  for (std::size_t rank = 0; rank < ranks; ++rank) {
    auto found =
        existing.find(podspec::rankPodName(gang.jobName, static_cast<std::uint32_t>(rank)));
    if (found == existing.end()) {
      needsCreate[rank] = true;
      actions[rank].bind = true;
      continue;
    }
    auto action = adoptExisting(*found->second, gang, rank);
    if (!action.isOk()) return fail(action.status());
    actions[rank] = *action;
  }

  // The Service, the NetworkPolicy and the step-token Secret do not depend on one another: one
  // round trip for all three (bindParallelism at once), not one each. The pods wait for them
  // all: a rank must not run before its network is isolated, and it names the Secret.
  const bool needsSecret = stepRuntime && gang.stepSecretName.empty();
  std::string secretName;
  Status ready = kube::runBounded(needsSecret ? 3 : 2, options_.bindParallelism, true,
                                  [&](std::size_t i) -> Status {
                                    if (i == 0) return ensureService(gang, fresh);
                                    if (i == 1) return ensureNetworkPolicy(gang, fresh);
                                    auto secret = createStepTokenSecret(gang);
                                    if (!secret.isOk()) return secret.status();
                                    secretName = std::move(secret).value();
                                    return Status::ok();
                                  });
  if (!ready.isOk()) {
    if (!fenceOpen()) return ready;
    return fail(ready);
  }
  if (needsSecret) gang.stepSecretName = std::move(secretName);
  auto made = podspec::rankPods(gang);
  if (!made.isOk()) return fail(made.status());
  std::vector<api::Pod>& pods = *made;
  reached(AdmissionStep::kObjectsReady);

  const bool createBound = options_.placement == GangPlacement::kCreateBound;
  std::atomic<bool> fenceTripped{false};
  // Create-bound: the ranks that only hold a node (1..N-1) first, rank 0 (which runs the
  // script) last, each in a round of its own, so a failed create never leaves a script running.
  std::vector<std::vector<std::size_t>> rounds(1);
  for (std::size_t rank = 0; rank < ranks; ++rank) {
    if (!needsCreate[rank]) continue;
    if (createBound) {
      pods[rank].spec.nodeName = gang.nodes[rank];
      actions[rank].bind = false;
    }
    if (createBound && rank == 0) {
      rounds.push_back({0});
    } else {
      rounds[0].push_back(rank);
    }
  }
  Status created;
  for (const std::vector<std::size_t>& toCreate : rounds) {
    created = kube::runBounded(
        toCreate.size(), options_.bindParallelism, true, [&](std::size_t i) -> Status {
          const std::size_t rank = toCreate[i];
          if (!fenceOpen()) {
            fenceTripped = true;
            return fenceClosed();
          }
          auto result = writer_.create(kube::resources::pods(), gang.namespaceName,
                                       api::encodePod(pods[rank]));
          if (result.isOk()) {
            actions[rank].uid = uidOf(*result);
            if (auto pod = api::decodePod(*result); pod.isOk()) createdRefs[rank] = refOf(*pod);
            reached(AdmissionStep::kPodCreated);
            return Status::ok();
          }
          if (result.status().code() != StatusCode::kAlreadyExists) return result.status();
          if (fresh) {
            // The caches were behind. Adopting the pod could mix two step tokens in one attempt
            // (ours is new), and rolling the attempt back could stop a gang that runs.
            return {StatusCode::kAlreadyExists,
                    "pod " + pods[rank].metadata.name +
                        " exists though the operator's caches showed no pod of the job; the "
                        "pods this admission made are deleted and the job is tried again"};
          }
          // Created since our list (a concurrent or retried admit): adopt it if it is ours.
          auto got =
              reader_.get(kube::resources::pods(), gang.namespaceName, pods[rank].metadata.name);
          if (!got.isOk()) return got.status();
          auto pod = api::decodePod(*got);
          if (!pod.isOk()) return pod.status();
          auto action = adoptExisting(*pod, gang, rank);
          if (!action.isOk()) return action.status();
          actions[rank] = *action;
          return Status::ok();
        });
    if (!created.isOk()) break;
  }
  if (fenceTripped) return fenceClosed();
  if (!created.isOk()) return fail(created);

  std::vector<std::size_t> toBind;
  for (std::size_t rank = 0; rank < ranks; ++rank) {
    if (actions[rank].bind) toBind.push_back(rank);
  }
  Status bound =
      kube::runBounded(toBind.size(), options_.bindParallelism, true, [&](std::size_t i) -> Status {
        const std::size_t rank = toBind[i];
        if (!fenceOpen()) {
          fenceTripped = true;
          return fenceClosed();
        }
        const std::string& name = pods[rank].metadata.name;
        Status result = binder_.bind(gang.namespaceName, name, gang.nodes[rank], actions[rank].uid);
        if (result.isOk()) {
          ++binds_;
          reached(AdmissionStep::kPodBound);
          return result;
        }
        if (result.code() == StatusCode::kAborted) {
          // 409: already bound. A retry whose first answer was lost lands here; bound where we
          // planned it is success, anywhere else is not our gang's placement.
          auto got = reader_.get(kube::resources::pods(), gang.namespaceName, name);
          if (got.isOk()) {
            auto pod = api::decodePod(*got);
            if (pod.isOk() && pod->metadata.uid == actions[rank].uid &&
                pod->spec.nodeName == gang.nodes[rank]) {
              return Status::ok();
            }
          }
        }
        ++bindFailures_;
        return {result.code(),
                "bind " + name + " to " + gang.nodes[rank] + ": " + result.message()};
      });
  if (fenceTripped) return fenceClosed();
  if (!bound.isOk()) return fail(bound);
  if (admitted != nullptr) {
    for (std::size_t rank = 0; rank < ranks; ++rank) pods[rank].spec.nodeName = gang.nodes[rank];
    *admitted = std::move(pods);
  }
  reached(AdmissionStep::kGangBound);
  return Status::ok();
}

Status GangBinder::rollbackAfterFailure(const podspec::GangInput& gang, const Status& cause) {
  ++rollbacks_;
  if (!fenceOpen()) return withRollbackNote(cause, fenceClosed());
  auto listed = kube::listAll(reader_, kube::resources::pods(), gang.namespaceName,
                              jobSelector(gang.jobName));
  if (!listed.isOk()) return withRollbackNote(cause, listed.status());
  auto found = decodePods(*listed);
  if (!found.isOk()) return withRollbackNote(cause, found.status());
  std::vector<PodRef> refs;
  for (const api::Pod& pod : *found) {
    // Never another owner's pod, nor another attempt's: the conflict that failed us may be one.
    if (sameAttempt(pod, gang)) refs.push_back(refOf(pod));
  }
  return withRollbackNote(cause, deletePods(gang.namespaceName, refs));
}

void GangBinder::releaseTracking(std::string_view ns, const PodRef& ref) {
  constexpr int kTries = 3;
  TrackingRelease release = *ref.tracking;
  for (int attempt = 0; attempt < kTries; ++attempt) {
    auto patched = writer_.patch(kube::resources::pods(), ns, release.name, releasePatch(release));
    if (patched.isOk() || patched.status().code() != StatusCode::kAborted) return;
    auto got = reader_.get(kube::resources::pods(), ns, release.name);
    if (!got.isOk()) return;
    auto pod = api::decodePod(*got);
    if (!pod.isOk() || pod->metadata.uid != ref.uid) return;  // another incarnation: not ours
    auto again = trackingRelease(*pod);
    if (!again) return;
    release = std::move(*again);
  }
}

Status GangBinder::deletePods(std::string_view ns, const std::vector<PodRef>& refs) {
  std::atomic<bool> fenceTripped{false};
  Status result =
      kube::runBounded(refs.size(), options_.bindParallelism, false, [&](std::size_t i) -> Status {
        const PodRef& ref = refs[i];
        if (fenceTripped || !fenceOpen()) {
          fenceTripped = true;
          return fenceClosed();
        }
        // A gang rolled back never ran whole: it has no end for its job to record, so its
        // finalizer goes first. What is left after a few conflicts (a kubelet writing its
        // status meanwhile) the next cycle releases.
        if (ref.tracking) releaseTracking(ns, ref);
        kube::DeleteOptions options;
        if (!ref.uid.empty()) options.uid = ref.uid;
        options.propagationPolicy = "Background";
        // Nothing runs for an unbound or finished pod, so it can go at once; a bound, live one
        // keeps its grace period so the kubelet stops it before its GPUs count as free.
        if (ref.nodeName.empty() || ref.terminal) options.gracePeriodSeconds = 0;
        Status removed = writer_.remove(kube::resources::pods(), ns, ref.name, options);
        if (removed.isOk()) {
          ++podsDeleted_;
          return removed;
        }
        // Gone already, or the name now belongs to a newer incarnation (uid precondition).
        if (removed.code() == StatusCode::kNotFound || removed.code() == StatusCode::kAborted) {
          return Status::ok();
        }
        return {removed.code(), "delete pod " + ref.name + ": " + removed.message()};
      });
  if (fenceTripped) return fenceClosed();
  return result;
}

Status GangBinder::rollback(std::string_view ns, std::string_view jobName, std::uint32_t attempt,
                            RollbackScope scope) {
  if (!fenceOpen()) return fenceClosed();
  auto listed = kube::listAll(reader_, kube::resources::pods(), ns, jobSelector(jobName));
  if (!listed.isOk()) return listed.status();
  auto found = decodePods(*listed);
  if (!found.isOk()) return found.status();
  std::vector<PodRef> refs;
  for (const api::Pod& pod : *found) {
    const auto podAttempt = podspec::bookkeepingNumber(pod.metadata.labels, podspec::kAttemptLabel);
    if (!podAttempt) continue;
    const bool match =
        scope == RollbackScope::kThisAttempt ? *podAttempt == attempt : *podAttempt <= attempt;
    if (match) refs.push_back(refOf(pod));
  }
  if (refs.empty()) return Status::ok();
  ++rollbacks_;
  return deletePods(ns, refs);
}

Status GangBinder::removeGang(const PartialGang& gang) {
  if (!fenceOpen()) return fenceClosed();
  if (gang.pods.empty()) return Status::ok();
  ++rollbacks_;
  return deletePods(gang.namespaceName, gang.pods);
}

}  // namespace kubeslurm::controllers
