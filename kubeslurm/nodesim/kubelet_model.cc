#include "kubeslurm/nodesim/kubelet_model.h"

#include <algorithm>
#include <set>
#include <string>
#include <tuple>

namespace kubeslurm::nodesim {

namespace {

using Kind = api::ContainerState::Kind;

std::int64_t floorSeconds(std::int64_t ms) { return ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000); }
std::int64_t ceilSeconds(std::int64_t ms) { return -floorSeconds(-ms); }

void earliest(std::optional<std::int64_t>& wake, std::optional<std::int64_t> at) {
  if (at && (!wake || *at < *wake)) wake = at;
}

bool isNativeResource(std::string_view name) {
  return name == "cpu" || name == "memory" || name == "ephemeral-storage" || name == "pods" ||
         name.starts_with("hugepages-") || name.starts_with("kubernetes.io/") ||
         name.find('/') == std::string_view::npos;
}

// The request the kubelet compares for `resource`: cpu in millicores, the rest in units.
std::int64_t request(const api::Pod& pod, const std::string& resource) {
  if (resource == "pods") return 1;
  auto value =
      resource == "cpu" ? api::podRequestMilli(pod, resource) : api::podRequest(pod, resource);
  return value.isOk() ? *value : 0;
}

std::int64_t allocatableOf(const SimNode& node, const std::string& resource) {
  auto it = node.allocatable.find(resource);
  if (it == node.allocatable.end()) return 0;
  if (resource == "cpu") {
    auto milli = api::parseQuantityMilli(it->second);
    return milli.isOk() ? *milli : 0;
  }
  auto value = api::parseQuantityValue(it->second);
  return value.isOk() ? *value : 0;
}

// The resources predicate.go checks, in its order: pod count, cpu, memory, ephemeral storage,
// then the extended resources the pod asks for (sorted, for a stable first reason).
std::vector<std::string> resourcesToCheck(const api::Pod& pod) {
  std::vector<std::string> names = {"pods", "cpu", "memory", "ephemeral-storage"};
  std::set<std::string> extra;
  auto scan = [&](const std::vector<api::Container>& containers) {
    for (const auto& c : containers) {
      for (const auto* list : {&c.resources.requests, &c.resources.limits}) {
        for (const auto& [name, _] : *list) {
          if (name != "cpu" && name != "memory" && name != "ephemeral-storage") extra.insert(name);
        }
      }
    }
  };
  scan(pod.spec.containers);
  scan(pod.spec.initContainers);
  names.insert(names.end(), extra.begin(), extra.end());
  return names;
}

api::ContainerState waiting(std::string reason, std::string message = {}) {
  api::ContainerState state;
  state.kind = Kind::kWaiting;
  state.reason = std::move(reason);
  state.message = std::move(message);
  return state;
}

bool restarts(const std::string& policy, std::int32_t exitCode) {
  if (policy == "Never") return false;
  if (policy == "OnFailure") return exitCode != 0;
  return true;  // Always, and the API server's default
}

// kubelet_pods.go getPhase.
std::string phaseOf(const api::PodSpec& spec, const std::vector<api::ContainerStatus>& statuses) {
  int running = 0;
  int waitingCount = 0;
  int stopped = 0;
  int succeeded = 0;
  for (const auto& s : statuses) {
    switch (s.state.kind) {
      case Kind::kRunning:
        ++running;
        break;
      case Kind::kTerminated:
        ++stopped;
        if (s.state.exitCode == 0) ++succeeded;
        break;
      case Kind::kWaiting:
        if (s.lastState.kind == Kind::kTerminated) {
          ++stopped;
        } else {
          ++waitingCount;
        }
        break;
      case Kind::kNone:
        ++waitingCount;
        break;
    }
  }
  if (waitingCount > 0) return "Pending";
  if (running > 0) return "Running";
  if (stopped > 0) {
    if (spec.restartPolicy == "Never") return succeeded == stopped ? "Succeeded" : "Failed";
    if (spec.restartPolicy == "OnFailure") return succeeded == stopped ? "Succeeded" : "Running";
    return "Running";
  }
  return "Pending";
}

void setCondition(api::PodStatus& status, const std::string& type, const std::string& value,
                  const std::string& reason, const std::string& message, std::int64_t nowS) {
  for (auto& c : status.conditions) {
    if (c.type != type) continue;
    if (c.status != value || !c.lastTransitionTime) c.lastTransitionTime = nowS;
    c.status = value;
    c.reason = reason;
    c.message = message;
    return;
  }
  api::Condition c;
  c.type = type;
  c.status = value;
  c.reason = reason;
  c.message = message;
  c.lastTransitionTime = nowS;
  status.conditions.push_back(std::move(c));
}

// Conditions as generateAPIPodStatus writes them (pkg/kubelet/status/generate.go).
void updateConditions(const api::Pod& pod, api::PodStatus& status, std::int64_t nowS) {
  setCondition(status, "Initialized", "True", "", "", nowS);
  std::string unready;
  for (const auto& s : status.containerStatuses) {
    if (s.ready) continue;
    if (!unready.empty()) unready += ' ';
    unready += s.name;
  }
  const bool terminal = status.phase == "Succeeded" || status.phase == "Failed";
  if (unready.empty() && !terminal) {
    setCondition(status, "ContainersReady", "True", "", "", nowS);
    setCondition(status, "Ready", "True", "", "", nowS);
  } else if (terminal) {
    setCondition(status, "ContainersReady", "False", "PodCompleted", "", nowS);
    setCondition(status, "Ready", "False", "PodCompleted", "", nowS);
  } else {
    const std::string message = "containers with unready status: [" + unready + "]";
    setCondition(status, "ContainersReady", "False", "ContainersNotReady", message, nowS);
    setCondition(status, "Ready", "False", "ContainersNotReady", message, nowS);
  }
  bool scheduled = false;
  for (const auto& c : status.conditions) scheduled = scheduled || c.type == "PodScheduled";
  if (!scheduled) setCondition(status, "PodScheduled", "True", "", "", nowS);
  // Keep a stable order (PodScheduled first as the scheduler wrote it, then the kubelet's).
  (void)pod;
}

const api::Container* findContainer(const api::Pod& pod, const std::string& name) {
  for (const auto& c : pod.spec.containers) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::string containerId(const api::Pod& pod, const std::string& name, std::int32_t restart) {
  return "containerd://" + hexId(pod.metadata.uid + "/" + name + "/" + std::to_string(restart), 64);
}

std::string imageId(const std::string& image) {
  return "docker.io/library/" + image + "@sha256:" + hexId(image, 64);
}

// Moves the pod's containers forward to `nowMs` (transitions chained, so a simulator that was
// down catches up in one pass with the timestamps each step would have had).
void advanceContainers(const api::Pod& pod, api::PodStatus& status, std::int64_t nowMs,
                       const ModelOptions& options, Runner& runner,
                       std::optional<std::int64_t>& wake) {
  const std::int64_t startAtMs = *status.startTime * 1000 + options.startDelayMs;
  for (auto& s : status.containerStatuses) {
    const api::Container* container = findContainer(pod, s.name);
    if (container == nullptr) continue;
    for (int guard = 0; guard < 64; ++guard) {
      const ContainerRef ref{pod, *container, s.restartCount, status.podIP};
      if (s.state.kind == Kind::kWaiting || s.state.kind == Kind::kNone) {
        std::int64_t readyAtMs = startAtMs;
        if (s.lastState.kind == Kind::kTerminated && s.lastState.finishedAt) {
          // CrashLoopBackOff: the n-th restart waits base * 2^(n-1), capped.
          std::int64_t backoff = options.backoffBaseMs;
          for (std::int32_t i = 1; i < s.restartCount && backoff < options.backoffMaxMs; ++i) {
            backoff *= 2;
          }
          readyAtMs = *s.lastState.finishedAt * 1000 + std::min(backoff, options.backoffMaxMs);
        }
        if (nowMs < readyAtMs) {
          earliest(wake, readyAtMs);
          break;
        }
        const std::int64_t startedS = ceilSeconds(readyAtMs);
        runner.start(ref, startedS * 1000);
        s.state = {};
        s.state.kind = Kind::kRunning;
        s.state.startedAt = startedS;
        s.ready = true;
        s.started = true;
        s.containerID = containerId(pod, s.name, s.restartCount);
        s.imageID = imageId(container->image);
        continue;
      }
      if (s.state.kind == Kind::kRunning) {
        const RunStatus run = runner.poll(ref, s.state.startedAt.value_or(0) * 1000, nowMs);
        if (!run.exited) {
          earliest(wake, run.checkAtMs);
          break;
        }
        api::ContainerState done;
        done.kind = Kind::kTerminated;
        done.exitCode = run.exitCode;
        done.reason = run.exitCode == 0 ? "Completed" : "Error";
        done.message = run.message;
        done.startedAt = s.state.startedAt;
        done.finishedAt = std::max(ceilSeconds(run.finishedAtMs), s.state.startedAt.value_or(0));
        s.ready = false;
        s.started = false;
        if (restarts(pod.spec.restartPolicy, run.exitCode)) {
          s.lastState = done;
          s.restartCount += 1;
          s.state = waiting("CrashLoopBackOff", "back-off restarting failed container " + s.name +
                                                    " in pod " + pod.metadata.name + "_" +
                                                    pod.metadata.namespaceName + "(" +
                                                    pod.metadata.uid + ")");
          continue;
        }
        s.state = done;
        break;
      }
      break;  // terminated for good
    }
  }
}

// pkg/kubelet/active_deadline.go: a pod active longer than spec.activeDeadlineSeconds, counted
// from status.startTime, is killed with its grace period and ends Failed, reason
// DeadlineExceeded. The second at which it is exceeded, when it has a deadline.
std::optional<std::int64_t> activeDeadline(const api::Pod& pod) {
  if (!pod.spec.activeDeadlineSeconds || !pod.status.startTime) return std::nullopt;
  return *pod.status.startTime + *pod.spec.activeDeadlineSeconds;
}
constexpr std::int64_t kDefaultGracePeriodSeconds = 30;  // core/v1 terminationGracePeriodSeconds

// Stop every running container (SIGTERM now, SIGKILL at `killAtMs`): graceful deletion, or an
// exceeded deadline. True once none runs.
bool stopContainers(const api::Pod& pod, api::PodStatus& status, std::int64_t killAtMs,
                    std::int64_t nowMs, Runner& runner, std::optional<std::int64_t>& wake) {
  bool allStopped = true;
  for (auto& s : status.containerStatuses) {
    if (s.state.kind != Kind::kRunning) continue;
    const api::Container* container = findContainer(pod, s.name);
    if (container == nullptr) continue;
    const ContainerRef ref{pod, *container, s.restartCount, status.podIP};
    const RunStatus run = runner.stop(ref, s.state.startedAt.value_or(0) * 1000, killAtMs, nowMs);
    if (!run.exited) {
      allStopped = false;
      earliest(wake, run.checkAtMs);
      continue;
    }
    api::ContainerState done;
    done.kind = Kind::kTerminated;
    done.exitCode = run.exitCode;
    done.reason = run.exitCode == 0 ? "Completed" : "Error";
    done.message = run.message;
    done.startedAt = s.state.startedAt;
    done.finishedAt = std::max(ceilSeconds(run.finishedAtMs), s.state.startedAt.value_or(0));
    s.state = done;
    s.ready = false;
    s.started = false;
  }
  return allStopped;
}

// A pod just admitted: Pending, every container waiting in ContainerCreating.
api::PodStatus admittedStatus(const SimNode& node, const api::Pod& pod, std::int64_t nowS,
                              const std::string& podIP) {
  api::PodStatus status = pod.status;
  status.phase = "Pending";
  status.reason.clear();
  status.message.clear();
  status.hostIP = node.internalIP;
  status.podIP = podIP;
  status.startTime = nowS;
  status.containerStatuses.clear();
  for (const auto& c : pod.spec.containers) {
    api::ContainerStatus s;
    s.name = c.name;
    s.image = c.image;
    s.started = false;
    s.state = waiting("ContainerCreating");
    status.containerStatuses.push_back(std::move(s));
  }
  status.initContainerStatuses.clear();
  for (const auto& c : pod.spec.initContainers) {
    api::ContainerStatus s;
    s.name = c.name;
    s.image = c.image;
    s.state = waiting("PodInitializing");
    status.initContainerStatuses.push_back(std::move(s));
  }
  return status;
}

// Init containers are taken as done when the first main container starts.
void finishInitContainers(const api::Pod& pod, api::PodStatus& status) {
  bool anyStarted = false;
  for (const auto& s : status.containerStatuses) {
    anyStarted = anyStarted || s.state.kind != Kind::kWaiting || s.restartCount > 0;
  }
  if (!anyStarted) return;
  for (auto& s : status.initContainerStatuses) {
    if (s.state.kind == Kind::kTerminated) continue;
    s.state = {};
    s.state.kind = Kind::kTerminated;
    s.state.reason = "Completed";
    s.state.startedAt = *status.startTime;
    s.state.finishedAt = *status.startTime;
    s.ready = true;
    s.containerID = containerId(pod, s.name, 0);
  }
}

bool sameStatus(const api::PodStatus& a, const api::PodStatus& b) {
  return encodePod(api::Pod{{}, {}, a, nlohmann::json::object()})["status"] ==
         encodePod(api::Pod{{}, {}, b, nlohmann::json::object()})["status"];
}

}  // namespace

std::optional<Rejection> admit(const SimNode& node, const api::Pod& pod,
                               std::span<const api::Pod* const> admitted) {
  for (const std::string& resource : resourcesToCheck(pod)) {
    const bool known = node.allocatable.contains(resource);
    if (!known && !isNativeResource(resource)) continue;  // removeMissingExtendedResources
    const std::int64_t requested = request(pod, resource);
    if (requested == 0 && resource != "pods") continue;
    std::int64_t used = 0;
    for (const api::Pod* other : admitted) used += request(*other, resource);
    const std::int64_t capacity = allocatableOf(node, resource);
    if (used + requested <= capacity) continue;
    return Rejection{"OutOf" + resource, "Pod Node didn't have enough resource: " + resource +
                                             ", requested: " + std::to_string(requested) +
                                             ", used: " + std::to_string(used) +
                                             ", capacity: " + std::to_string(capacity)};
  }
  return std::nullopt;
}

NodeStep stepNode(const SimNode& node, bool nodeFailed, std::span<const api::Pod* const> pods,
                  std::int64_t nowMs, const ModelOptions& options, Runner& runner) {
  NodeStep step;
  const std::int64_t nowS = floorSeconds(nowMs);
  std::vector<const api::Pod*> ordered(pods.begin(), pods.end());
  std::sort(ordered.begin(), ordered.end(), [](const api::Pod* a, const api::Pod* b) {
    return std::tie(a->metadata.creationTimestamp, a->metadata.namespaceName, a->metadata.name) <
           std::tie(b->metadata.creationTimestamp, b->metadata.namespaceName, b->metadata.name);
  });

  if (nodeFailed) {
    if (!options.failPodsOnNodeFailure) return step;
    for (const api::Pod* pod : ordered) {
      if (api::podIsTerminal(*pod)) continue;
      api::PodStatus status = pod->status;
      status.phase = "Failed";
      status.reason = "NodeLost";
      status.message =
          "Node " + node.name + " which was running pod " + pod->metadata.name + " is unresponsive";
      for (auto& s : status.containerStatuses) s.ready = false;
      updateConditions(*pod, status, nowS);
      step.updates.push_back({pod, std::move(status), false});
    }
    return step;
  }

  // Pass 1: pods already admitted move forward; they hold their requests and pod IPs.
  std::vector<const api::Pod*> holding;
  std::set<std::string> usedIPs;
  std::vector<const api::Pod*> pending;
  for (const api::Pod* pod : ordered) {
    if (!pod->status.startTime) {
      if (pod->metadata.deletionTimestamp) {
        step.updates.push_back({pod, std::nullopt, true});  // never started: nothing to stop
      } else if (!api::podIsTerminal(*pod)) {
        pending.push_back(pod);
      }
      continue;
    }
    api::PodStatus status = pod->status;
    bool remove = false;
    if (!api::podIsTerminal(*pod)) {
      const std::optional<std::int64_t> deadline = activeDeadline(*pod);
      if (pod->metadata.deletionTimestamp) {
        if (stopContainers(*pod, status, *pod->metadata.deletionTimestamp * 1000, nowMs, runner,
                           step.wakeAtMs)) {
          api::PodSpec never;
          never.restartPolicy = "Never";
          status.phase = phaseOf(never, status.containerStatuses);
          if (status.phase != "Succeeded") status.phase = "Failed";
          remove = true;
        }
      } else if (deadline && nowS >= *deadline) {
        // The kubelet reports the phase at once; here it follows once nothing runs, so that a
        // terminal pod never has running containers.
        const std::int64_t grace =
            pod->spec.terminationGracePeriodSeconds.value_or(kDefaultGracePeriodSeconds);
        if (stopContainers(*pod, status, (*deadline + grace) * 1000, nowMs, runner,
                           step.wakeAtMs)) {
          status.phase = "Failed";
          status.reason = "DeadlineExceeded";
          status.message = "Pod was active on the node longer than the specified deadline";
        }
      } else {
        advanceContainers(*pod, status, nowMs, options, runner, step.wakeAtMs);
        finishInitContainers(*pod, status);
        status.phase = phaseOf(pod->spec, status.containerStatuses);
        if (deadline && status.phase != "Succeeded" && status.phase != "Failed") {
          earliest(step.wakeAtMs, *deadline * 1000);
        }
      }
      updateConditions(*pod, status, nowS);
    } else if (pod->metadata.deletionTimestamp) {
      remove = true;
    }
    const bool changed = !sameStatus(status, pod->status);
    if (changed || remove) {
      step.updates.push_back({pod, changed ? std::optional(status) : std::nullopt, remove});
    }
    if (status.phase != "Succeeded" && status.phase != "Failed") {
      holding.push_back(pod);
      if (!status.podIP.empty()) usedIPs.insert(status.podIP);
    }
  }

  // Pass 2: admission, in creation order, against what is held.
  int nextHost = 2;
  for (const api::Pod* pod : pending) {
    if (auto rejected = admit(node, *pod, holding)) {
      api::PodStatus status = pod->status;
      status.phase = "Failed";
      status.reason = rejected->reason;
      status.message = rejected->message;
      status.startTime = nowS;
      step.updates.push_back({pod, std::move(status), false});
      continue;
    }
    std::string ip;
    for (; nextHost < 255; ++nextHost) {
      std::string candidate = node.podIPPrefix + std::to_string(nextHost);
      if (!usedIPs.contains(candidate)) {
        ip = std::move(candidate);
        ++nextHost;
        break;
      }
    }
    api::PodStatus status = admittedStatus(node, *pod, nowS, ip);
    advanceContainers(*pod, status, nowMs, options, runner, step.wakeAtMs);
    finishInitContainers(*pod, status);
    status.phase = phaseOf(pod->spec, status.containerStatuses);
    updateConditions(*pod, status, nowS);
    if (status.phase != "Succeeded" && status.phase != "Failed") {
      holding.push_back(pod);
      if (pod->spec.activeDeadlineSeconds) {
        earliest(step.wakeAtMs, (nowS + *pod->spec.activeDeadlineSeconds) * 1000);
      }
    }
    step.updates.push_back({pod, std::move(status), false});
  }
  return step;
}

}  // namespace kubeslurm::nodesim
