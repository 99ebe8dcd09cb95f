// The kubelet of one simulated node, as a pure function of the pods observed on it and `now`.
//
// Level-triggered: everything the model needs is read back from the pod's own status
// (status.startTime marks a pod as admitted; container states, startedAt, finishedAt,
// restartCount and lastState carry the rest), so a restarted simulator, a repeated event or a
// lost write converges to the same statuses. Deadlines (start delay, run time, back-off, grace
// period) count from those timestamps, which the API keeps to the second.
//
// What it plays, and the kubelet code it follows:
//  - admission (pkg/kubelet/lifecycle/predicate.go): pods bound here are admitted in creation
//    order; one whose requests do not fit in allocatable minus the requests of the admitted,
//    non-terminal pods is rejected: phase Failed, reason "OutOf<resource>", message "Pod Node
//    didn't have enough resource: R, requested: X, used: Y, capacity: Z" (kubelet.go rejectPod
//    prefixes "Pod "); cpu in millicores, memory and storage in bytes; extended resources the
//    node does not have are ignored (removeMissingExtendedResources);
//  - start: Pending with containers waiting ContainerCreating, then after the start delay
//    Running, containers running/ready/started, conditions Initialized, ContainersReady,
//    Ready, PodScheduled (status_manager / kubelet_pods.go generateAPIPodStatus);
//  - exit: terminated with exitCode, reason Completed or Error; phase from getPhase
//    (kubelet_pods.go): Succeeded when every container exited 0 and the policy does not restart,
//    Failed when one failed under Never, else Running; a restart (Always, or OnFailure after a
//    failure) bumps restartCount, keeps the exit in lastState and waits in CrashLoopBackOff
//    (10 s doubling to 5 min, as the kubelet's back-off);
//  - graceful deletion (kuberuntime killContainer): SIGTERM (exit 143), or SIGKILL (137) at
//    deletionTimestamp for a container that ignores it; once nothing runs the kubelet's status
//    manager deletes the pod with grace period 0;
//  - active deadline (active_deadline.go): a pod running longer than activeDeadlineSeconds
//    from status.startTime is stopped like a deletion (SIGKILL after its grace period) and
//    ends Failed, reason DeadlineExceeded; it is not deleted;
//  - node failure: a dead kubelet advances nothing; with failPodsOnNodeFailure its pods are
//    marked Failed, reason NodeLost (the node controller's reason before taint-based eviction).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/nodesim/runner.h"
#include "kubeslurm/nodesim/shape.h"

namespace kubeslurm::nodesim {

struct ModelOptions {
  std::int64_t startDelayMs = 1000;  // admitted -> running
  bool failPodsOnNodeFailure = false;
  std::int64_t backoffBaseMs = 10'000;  // kubelet: 10 s, doubling
  std::int64_t backoffMaxMs = 300'000;  // ... to 5 min
};

struct PodUpdate {
  const api::Pod* pod = nullptr;         // the observed pod
  std::optional<api::PodStatus> status;  // write this status (status subresource) first
  bool remove = false;                   // then delete it with grace period 0
};

struct NodeStep {
  std::vector<PodUpdate> updates;
  std::optional<std::int64_t> wakeAtMs;  // the earliest deadline still ahead (start, exit...)
};

// One pass over the pods bound to `node` (in any order; deleted ones already removed).
NodeStep stepNode(const SimNode& node, bool nodeFailed, std::span<const api::Pod* const> pods,
                  std::int64_t nowMs, const ModelOptions& options, Runner& runner);

// Admission alone: the reason and message of a rejection, or nullopt when `pod` fits beside
// `admitted` (the admitted, non-terminal pods of the node).
struct Rejection {
  std::string reason;
  std::string message;
};
std::optional<Rejection> admit(const SimNode& node, const api::Pod& pod,
                               std::span<const api::Pod* const> admitted);

}  // namespace kubeslurm::nodesim
