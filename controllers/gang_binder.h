// The gang binder: turns one scheduling decision ("start this job on these nodes") into API
// writes — the job's headless Service, every rank pod, and a pods/binding per rank — so that
// either the whole gang ends up bound or none of it remains (DESIGN.md invariant 1).
//
// Two placements (GangPlacement), both all or nothing:
//  - create-bound (the operator's default): each rank is created with spec.nodeName set, the
//    ranks that only hold their node (1..N-1) first and rank 0, which runs the script, last.
//    One write per rank. A rank starts as soon as it is created, but a failed create stops the
//    admission before rank 0 exists, and the rollback deletes the ranks made so far: no script
//    ran, and a pod template's ranks were waiting at the rendezvous for rank 0. The kubelet
//    alone checks the fit, as it does for a binding.
//  - binding: every rank is created unbound (its schedulerName is ours, so kube-scheduler
//    never touches it), then bound through pods/binding once every create succeeded. Two writes
//    per rank; no pod starts before the whole gang exists. For clusters whose admission
//    policies treat pods created with a node differently from bound ones.
//
// The binder makes no scheduling choice: the nodes come from the core's plan. It writes only
// while the leader-election fence is open (invariant 2): every write is preceded by
// `canWrite()`, and once that says no, the binder stops where it is and returns kAborted —
// including mid-rollback. The gang it leaves behind is exactly what findPartialGangs() reports
// to the next leader, which removes it before its first scheduling cycle.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "controllers/rank_tracking.h"
#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/base/status.h"
#include "kubeslurm/kube/client.h"
#include "kubeslurm/podspec/rank_pods.h"

namespace kubeslurm::controllers {

// How far an admission has got, step by step, in the order admit() takes them.
enum class AdmissionStep : std::uint8_t {
  kObjectsReady,  // the Service, NetworkPolicy and step-token Secret exist; no pod written yet
  kPodCreated,    // one more rank pod created (heard once per pod)
  kPodBound,      // one more rank pod bound by a pods/binding (heard once per bind)
  kGangBound,     // every rank bound: admit() is about to return OK
};
std::string_view admissionStepName(AdmissionStep step);  // "objects-ready", "pod-created", ...
std::optional<AdmissionStep> parseAdmissionStep(std::string_view name);

enum class GangPlacement : std::uint8_t { kBinding, kCreateBound };

struct GangBinderOptions {
  // Binds (and creates) in flight at once for one gang. A 64-node gang bound one request at a
  // time would take 64 round trips while its first ranks already hold their nodes.
  std::size_t bindParallelism = 16;
  // The leader-election fence (kube::LeaderElector::canWrite). Empty: always open.
  std::function<bool()> canWrite;
  // Hears each step as it completes, on the thread that did it. The operator's --crash-at kills
  // the process here, so that tests can stop an admission at a chosen write instead of at a
  // random instant. Empty: nothing listens.
  std::function<void(AdmissionStep)> reached;
  GangPlacement placement = GangPlacement::kBinding;
  // The step token of an attempt's Secret (step_tokens.h, derived so that the step proxy can
  // add it to the calls it forwards). Empty: random bytes, which nobody outside the job knows.
  std::function<std::string(const podspec::GangInput&)> stepToken = nullptr;
};

// One pod that the binder would delete, named with the uid it was seen with so that a delete
// never reaches a newer incarnation of the same name.
struct PodRef {
  std::string name;
  std::string uid;
  std::string nodeName;                     // spec.nodeName ("" = never bound)
  bool terminal = false;                    // Succeeded or Failed
  std::optional<TrackingRelease> tracking;  // its job-tracking finalizer, released first
  bool operator==(const PodRef&) const = default;
};

enum class GangDefect : std::uint8_t {
  kMissingRanks,  // fewer live pods than the gang-size annotation
  kPartlyBound,   // some live ranks bound, some not
  kWrongNode,     // a rank bound to a node other than its planned-node annotation
  kRejected,      // the kubelet refused a rank at admission (phase Failed, reason OutOf*)
  kStaleAttempt,  // an earlier attempt than the job's current one
  kMalformed,     // gang-size or attempt missing, unparsable or inconsistent across ranks
};
std::string_view gangDefectName(GangDefect defect);

struct PartialGang {
  std::string namespaceName;
  std::string jobName;
  std::uint32_t attempt = 0;
  std::uint32_t gangSize = 0;       // 0 when the annotation was missing or inconsistent
  std::vector<GangDefect> defects;  // in enum order, each at most once
  std::vector<PodRef> pods;         // every pod of this (namespace, job, attempt), by name

  bool has(GangDefect defect) const;
  std::string describe() const;  // "ns/job attempt 2: MissingRanks,PartlyBound (3 pods)"
};

// The job's current attempt (status.restarts), keyed by (namespace, job name).
using CurrentAttempts = std::map<std::pair<std::string, std::string>, std::uint32_t>;

// PURE. Groups the operator's pods (those with the kubeslurm.io/job-name label; others are
// ignored) by (namespace, job, attempt) and returns, sorted by that key, every gang that must
// not be left running:
//  - fewer live pods (no deletionTimestamp) than its gang-size annotation, or a rank outside
//    [0, gang-size);
//  - some but not all live ranks bound (spec.nodeName set);
//  - a rank bound to a node other than its kubeslurm.io/planned-node annotation;
//  - a rank the kubelet rejected at admission (Failed with reason OutOf<resource>, as
//    pkg/kubelet/lifecycle/predicate.go names it) — the rest of such a gang holds its nodes for
//    a job that cannot run;
//  - a stale attempt: lower than `current` says for that job, or lower than the highest attempt
//    among `pods` for the same job (a newer gang exists, so this one was left by a requeue).
//    Without an entry in `current` only the second rule applies, so a caller that knows the
//    jobs should pass their status.restarts;
//  - malformed bookkeeping (no parsable gang-size, attempt or rank, or ranks disagreeing).
// A whole gang — every rank present, all bound to their planned nodes, none rejected — is not
// returned, whatever its phase; nor is a gang none of whose live pods is still unfinished (a
// finished script job keeps only rank 0, for its output): finished pods run nothing and hold
// no node, and they belong to the job controller.
std::vector<PartialGang> findPartialGangs(std::span<const api::Pod> pods,
                                          const CurrentAttempts& current = {});

// What the caller knows of a gang's pods before admit().
enum class KnownPods : std::uint8_t {
  kUnknown,  // admit() lists them first
  // The caller's caches show no pod of the job (any attempt) and no pod with a rank's name, and
  // no admission of its own is in flight: admit() writes at once, without a list. A rank's name
  // found taken fails the admission with kAlreadyExists (never adopted), and any failure
  // deletes the pods this call created and nothing else: the caches may have been behind, and
  // what holds the names may be a gang that runs (the caller's next look will show it).
  kNone,
};

// Which attempts rollback() removes.
enum class RollbackScope : std::uint8_t { kThisAttempt, kThisAndEarlier };

// The batch script of SlurmJob namespaceName/name, read from the API server: the operator's
// cache holds a stand-in for it (kScriptNotCached, job_object.h). Aborted when the job there is
// not the one with `uid` (deleted and made again under its name since it was planned).
StatusOr<std::string> readBatchScript(kube::Reader& reader, const std::string& namespaceName,
                                      const std::string& name, const std::string& uid);

class GangBinder {
 public:
  GangBinder(kube::Reader& reader, kube::Writer& writer, kube::Binder& binder,
             GangBinderOptions options = {});

  // Service, then every rank pod, then every bind (parallel, at most bindParallelism at a time).
  // Level-triggered: what already exists and is right is kept (a second admit of a bound gang
  // sends no write at all), so a retry after an unknown outcome is safe. On any failure every
  // pod of this attempt is deleted and the first error is returned; a closed fence returns
  // kAborted and writes nothing more, not even the rollback.
  //  - kInvalidArgument: the input makes no pods (rankPods), or nodes is empty;
  //  - kAlreadyExists: the Service or a rank's pod name is held by something that is not this
  //    attempt of this job (another owner, an earlier attempt still terminating);
  //  - kFailedPrecondition: a rank of this attempt is bound elsewhere, terminating or rejected;
  //  - the API server's errors otherwise.
  // `known`: kNone saves the list of a fresh gang (one write per object, no read).
  // `admitted`: on success, the gang's rank pods as written (each on its node), for the caller
  // to hold as what it expects its caches to show.
  Status admit(const podspec::GangInput& input, KnownPods known = KnownPods::kUnknown,
               std::vector<api::Pod>* admitted = nullptr);

  // PURE. The rank pods admit() writes for `input`, each on its planned node. With the in-pod
  // runtime and no step Secret named yet, a stand-in names the one the API server will name.
  static StatusOr<std::vector<api::Pod>> plannedPods(const podspec::GangInput& input);

  // Deletes every pod of `jobName` in `ns` with that attempt (or any attempt <= it): listed by
  // the job-name label, deleted by name with a uid precondition and propagation Background;
  // pods never bound or already terminal with gracePeriodSeconds 0, running ones with their own
  // grace period (a forced delete of a bound pod would drop it from the API while the kubelet
  // still runs it, and its GPUs would look free — invariant 4). Gone already or replaced by a
  // new incarnation: not an error. kAborted when the fence closes.
  Status rollback(std::string_view ns, std::string_view jobName, std::uint32_t attempt,
                  RollbackScope scope = RollbackScope::kThisAttempt);

  // Deletes exactly the pods findPartialGangs() reported for `gang` (uid preconditions), for
  // recovery, where pods of a malformed gang may lack a parsable attempt.
  Status removeGang(const PartialGang& gang);

  std::uint64_t binds() const { return binds_.load(); }
  std::uint64_t bindFailures() const { return bindFailures_.load(); }
  std::uint64_t rollbacks() const { return rollbacks_.load(); }  // gangs rolled back
  std::uint64_t podsDeleted() const { return podsDeleted_.load(); }

 private:
  bool fenceOpen() const;
  void reached(AdmissionStep step) const;
  // `fresh`: create first, read only on a conflict (KnownPods::kNone).
  Status ensureOwned(const kube::ResourceType& type, const podspec::GangInput& gang,
                     const kube::Json& wanted, bool fresh);
  Status ensureService(const podspec::GangInput& gang, bool fresh);
  // The job's NetworkPolicy, when its partition isolates jobs.
  Status ensureNetworkPolicy(const podspec::GangInput& gang, bool fresh);
  // A new step-token Secret for the attempt; its name, as the API server chose it.
  StatusOr<std::string> createStepTokenSecret(const podspec::GangInput& gang);
  Status deletePods(std::string_view ns, const std::vector<PodRef>& refs);
  // Removes the pod's job-tracking finalizer; a few tries when it changed since it was listed.
  void releaseTracking(std::string_view ns, const PodRef& ref);
  Status rollbackAfterFailure(const podspec::GangInput& gang, const Status& cause);

  kube::Reader& reader_;
  kube::Writer& writer_;
  kube::Binder& binder_;
  GangBinderOptions options_;
  std::atomic<std::uint64_t> binds_{0};
  std::atomic<std::uint64_t> bindFailures_{0};
  std::atomic<std::uint64_t> rollbacks_{0};
  std::atomic<std::uint64_t> podsDeleted_{0};
};

}  // namespace kubeslurm::controllers
