#include "kubeslurm/nodesim/simulator.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <thread>
#include <utility>

#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/kube/run_bounded.h"
#include "kubeslurm/nodesim/node_objects.h"

namespace kubeslurm::nodesim {

namespace {

using Json = nlohmann::json;
using Clock = std::chrono::system_clock;

std::atomic<LogLevel> gLogLevel{LogLevel::kInfo};

std::int64_t wallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch())
      .count();
}

const kube::ResourceType& podsType() {
  static const kube::ResourceType type = kube::resources::pods();
  return type;
}
const kube::ResourceType& nodesType() {
  static const kube::ResourceType type = kube::resources::nodes();
  return type;
}
const kube::ResourceType& leasesType() {
  static const kube::ResourceType type = kube::resources::leases();
  return type;
}

constexpr std::size_t kRegisterThreads = 8;
// Writes in flight at once, as many kubelets would have them: the simulator must never be what
// limits a scheduler's measured throughput.
constexpr std::size_t kWriteThreads = 16;

// Appends every part to one string (no temporaries per '+').
template <typename... Parts>
std::string cat(const Parts&... parts) {
  std::string out;
  ((out += parts), ...);
  return out;
}

// Errors a later attempt may not cure: stop registering instead of looping on them.
bool permanent(const Status& status) {
  return status.code() == StatusCode::kInvalidArgument ||
         status.code() == StatusCode::kPermissionDenied ||
         status.code() == StatusCode::kUnauthenticated;
}

}  // namespace

bool parseLogLevel(std::string_view text, LogLevel& level) {
  if (text == "debug") {
    level = LogLevel::kDebug;
  } else if (text == "info") {
    level = LogLevel::kInfo;
  } else if (text == "warning" || text == "warn") {
    level = LogLevel::kWarning;
  } else if (text == "error") {
    level = LogLevel::kError;
  } else {
    return false;
  }
  return true;
}

void setLogLevel(LogLevel level) { gLogLevel = level; }

void logLine(LogLevel level, const std::string& message) {
  if (level < gLogLevel.load()) return;
  static constexpr std::array<char, 4> kLetters = {'D', 'I', 'W', 'E'};
  const std::int64_t ms = wallMs();
  const auto seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  ::gmtime_r(&seconds, &tm);
  std::array<char, 32> stamp{};
  (void)std::strftime(stamp.data(), stamp.size(), "%H:%M:%S", &tm);
  (void)std::fprintf(stderr, "%c %s.%03d nodesim] %s\n",
                     kLetters.at(static_cast<std::size_t>(level)), stamp.data(),
                     static_cast<int>(ms % 1000), message.c_str());
}

Simulator::Simulator(kube::Client& client, SimulatorOptions options, Runner& runner)
    : client_(client), options_(std::move(options)), runner_(runner) {
  for (const SimNode& node : options_.nodes) nodes_[node.name].node = &node;
}

Simulator::~Simulator() {
  stop();
  if (informer_) informer_->stop();
}

SimulatorStats Simulator::stats() const {
  const std::lock_guard lock(mutex_);
  return stats_;
}

std::set<std::string> Simulator::failedNodes() const {
  const std::lock_guard lock(mutex_);
  return failed_;
}

void Simulator::stop() {
  stopped_ = true;
  const std::lock_guard lock(mutex_);
  wake_.notify_all();
  heartbeatWake_.notify_all();
}

Status Simulator::registerNode(NodeState& state, const Json* existing, std::int64_t nowMs) {
  const SimNode& node = *state.node;
  const std::int64_t nowS = nowMs / 1000;
  if (existing == nullptr) {
    auto created = client_.create(nodesType(), "", nodeObject(node, nowS));
    if (created.isOk()) {
      state.uid = created->value("/metadata/uid"_json_pointer, "");
      state.readySinceS = nowS;
    } else if (created.status().code() != StatusCode::kAlreadyExists) {
      return created.status();
    }
  }
  if (existing != nullptr || state.uid.empty()) {
    // A node from an earlier run: keep its Ready transition time if it is still Ready.
    Json current;
    if (existing != nullptr) {
      current = *existing;
    } else {
      auto got = client_.get(nodesType(), "", node.name);
      if (!got.isOk()) return got.status();
      current = std::move(*got);
    }
    state.uid = current.value("/metadata/uid"_json_pointer, "");
    state.readySinceS = nowS;
    auto decoded = api::decodeNode(current);
    if (decoded.isOk() && api::nodeReadyStatus(*decoded) == "True") {
      for (const auto& c : decoded->conditions) {
        if (c.type == "Ready" && c.lastTransitionTime) state.readySinceS = *c.lastTransitionTime;
      }
    }
    auto relabelled = client_.patch(nodesType(), "", node.name, nodeLabelsPatch(node));
    if (!relabelled.isOk()) return relabelled.status();
    auto reported = client_.patchStatus(
        nodesType(), "", node.name, Json{{"status", nodeStatus(node, nowS, state.readySinceS)}});
    if (!reported.isOk()) return reported.status();
  }
  return Status::ok();
}

Status Simulator::registerNodes() {
  const std::int64_t started = wallMs();
  auto existing = kube::listAll(client_, nodesType(), "", {});
  if (!existing.isOk()) return existing.status();
  std::map<std::string, const Json*> byName;
  for (const Json& item : (*existing)["items"]) {
    byName[item.value("/metadata/name"_json_pointer, "")] = &item;
  }
  auto leases = kube::listAll(client_, leasesType(), kLeaseNamespace, {});
  if (!leases.isOk()) return leases.status();
  std::set<std::string> haveLease;
  for (const Json& item : (*leases)["items"]) {
    haveLease.insert(item.value("/metadata/name"_json_pointer, ""));
  }
  auto registerOne = [&](const std::string& name, NodeState& state) -> Status {
    Status status;
    for (int attempt = 0; attempt < 5; ++attempt) {
      auto found = byName.find(name);
      status = registerNode(state, found == byName.end() ? nullptr : found->second, wallMs());
      if (status.isOk() || permanent(status)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200 * (attempt + 1)));
    }
    if (!status.isOk()) {
      return {status.code(), "registering node " + name + ": " + status.message()};
    }
    if (haveLease.contains(name)) {
      renewLease(state, wallMs());
      return Status::ok();
    }
    auto created = client_.create(
        leasesType(), kLeaseNamespace,
        leaseObject(*state.node, state.uid, wallMs() * 1000, options_.leaseDurationSeconds));
    if (!created.isOk() && created.status().code() != StatusCode::kAlreadyExists) {
      return {created.status().code(), "lease of " + name + ": " + created.status().message()};
    }
    return Status::ok();
  };
  // A few requests in flight at once: registration is latency-bound (two or three round trips
  // per node), and the client is shared and thread-safe.
  std::vector<NodeState*> states;
  std::vector<const std::string*> names;
  for (auto& [name, state] : nodes_) {
    names.push_back(&name);
    states.push_back(&state);
  }
  Status firstError = kube::runBounded(states.size(), kRegisterThreads, true, [&](std::size_t i) {
    return registerOne(*names[i], *states[i]);
  });
  if (!firstError.isOk()) return firstError;
  logLine(LogLevel::kInfo, "registered " + std::to_string(nodes_.size()) + " nodes in " +
                               std::to_string(wallMs() - started) + " ms");
  return Status::ok();
}

void Simulator::renewLease(NodeState& state, std::int64_t nowMs) {
  const SimNode& node = *state.node;
  auto renewed = client_.patch(leasesType(), kLeaseNamespace, node.name,
                               leaseRenewPatch(node, nowMs * 1000, options_.leaseDurationSeconds));
  if (renewed.status().code() == StatusCode::kNotFound) {
    renewed =
        client_.create(leasesType(), kLeaseNamespace,
                       leaseObject(node, state.uid, nowMs * 1000, options_.leaseDurationSeconds));
  }
  const std::lock_guard lock(mutex_);
  if (renewed.isOk()) {
    ++stats_.leaseRenewals;
  } else {
    ++stats_.errors;
    logLine(LogLevel::kWarning,
            "lease of " + node.name + " not renewed: " + renewed.status().toString());
  }
}

void Simulator::reportStatus(NodeState& state, std::int64_t nowMs) {
  const SimNode& node = *state.node;
  auto reported =
      client_.patchStatus(nodesType(), "", node.name,
                          Json{{"status", nodeStatus(node, nowMs / 1000, state.readySinceS)}});
  if (reported.status().code() == StatusCode::kNotFound) {
    // Someone deleted the Node: a kubelet registers it again.
    const Status again = registerNode(state, nullptr, nowMs);
    if (!again.isOk()) reported = again;
  }
  const std::lock_guard lock(mutex_);
  if (reported.isOk()) {
    ++stats_.nodeStatusReports;
  } else {
    ++stats_.errors;
    logLine(LogLevel::kWarning,
            "status of " + node.name + " not reported: " + reported.status().toString());
  }
}

void Simulator::heartbeatLoop() {
  using std::chrono::milliseconds;
  std::int64_t nextLease = wallMs() + options_.leaseInterval.count();
  std::int64_t nextStatus = wallMs() + options_.statusInterval.count();
  std::set<std::string> wasFailed;
  std::uint64_t seenVersion = 0;
  while (!stopped_) {
    std::set<std::string> failed;
    {
      std::unique_lock lock(mutex_);
      const std::int64_t due = std::min(nextLease, nextStatus);
      heartbeatWake_.wait_for(lock, milliseconds(std::max<std::int64_t>(0, due - wallMs())),
                              [&] { return stopped_ || failedVersion_ != seenVersion; });
      if (stopped_) return;
      seenVersion = failedVersion_;
      failed = failed_;
    }
    const std::int64_t now = wallMs();
    for (const std::string& name : wasFailed) {
      auto it = nodes_.find(name);
      if (failed.contains(name) || it == nodes_.end()) continue;
      // Recovered: the kubelet is back, Ready again from now on.
      logLine(LogLevel::kInfo, "node " + name + " recovered");
      it->second.readySinceS = now / 1000;
      renewLease(it->second, now);
      reportStatus(it->second, now);
    }
    for (const std::string& name : failed) {
      if (!wasFailed.contains(name)) logLine(LogLevel::kInfo, "node " + name + " failed");
    }
    wasFailed = failed;
    // Every node's renewal in one round, many in flight: one at a time, 5,000 nodes would take
    // longer than a Lease lasts.
    std::vector<NodeState*> alive;
    if (now >= nextLease || now >= nextStatus) {
      for (auto& [name, state] : nodes_) {
        if (!failed.contains(name)) alive.push_back(&state);
      }
    }
    const auto forEachAlive = [&](void (Simulator::*write)(NodeState&, std::int64_t)) {
      (void)kube::runBounded(alive.size(), kWriteThreads, false, [&](std::size_t i) {
        if (!stopped_) (this->*write)(*alive[i], wallMs());
        return Status::ok();
      });
    };
    if (now >= nextLease) {
      forEachAlive(&Simulator::renewLease);
      nextLease = now + options_.leaseInterval.count();
    }
    if (now >= nextStatus) {
      forEachAlive(&Simulator::reportStatus);
      nextStatus = now + options_.statusInterval.count();
    }
    if (stopped_) return;
  }
}

void Simulator::markDirty(const Json& pod) {
  const std::string node = pod.value("/spec/nodeName"_json_pointer, "");
  if (!nodes_.contains(node)) return;
  const std::lock_guard lock(mutex_);
  dirty_.insert(node);
  wake_.notify_all();
}

void Simulator::planNode(NodeState& state, std::int64_t nowMs, bool failed,
                         std::vector<PodWrite>& writes) {
  const SimNode& node = *state.node;
  auto objects = informer_->store().byIndex(kube::kNodeIndex, node.name);
  if (!objects.isOk()) return;
  std::vector<api::Pod> pods;
  pods.reserve(objects->size());
  for (const kube::ObjectPtr& object : *objects) {
    const Json* json = object.get();
    const std::string uid = kube::objectUid(*json);
    if (auto it = written_.find(uid); it != written_.end()) {
      // Until the watch brings our own write back, act on what the server answered.
      if (it->second.baseResourceVersion == kube::objectResourceVersion(*json)) {
        json = &it->second.object;
      } else {
        written_.erase(it);
      }
    }
    auto pod = api::decodePod(*json);
    if (!pod.isOk()) {
      logLine(LogLevel::kWarning,
              "pod " + kube::objectKey(*json) + " not understood: " + pod.status().toString());
      continue;
    }
    pods.push_back(std::move(*pod));
  }
  std::vector<const api::Pod*> pointers;
  pointers.reserve(pods.size());
  for (const api::Pod& pod : pods) pointers.push_back(&pod);

  NodeStep step = stepNode(node, failed, pointers, nowMs, options_.model, runner_);
  state.wakeAtMs = step.wakeAtMs;
  for (const PodUpdate& update : step.updates) {
    const api::Pod& pod = *update.pod;
    PodWrite write;
    write.state = &state;
    write.nowMs = nowMs;
    write.namespaceName = pod.metadata.namespaceName;
    write.name = pod.metadata.name;
    write.uid = pod.metadata.uid;
    write.baseResourceVersion = pod.metadata.resourceVersion;
    if (update.status) {
      api::Pod next = pod;
      next.status = *update.status;
      write.status = api::encodePod(next);
      write.phase = update.status->phase + " " + update.status->reason;
    }
    write.remove = update.remove;
    writes.push_back(std::move(write));
  }
}

void Simulator::sendPodWrites(std::vector<PodWrite>& writes) {
  // A pod's status, then its delete, in order; pods apart, on many connections.
  (void)kube::runBounded(writes.size(), kWriteThreads, false, [&](std::size_t i) {
    PodWrite& write = writes[i];
    if (write.status) {
      write.written = client_.updateStatus(podsType(), write.namespaceName, *write.status);
      if (!write.written->isOk()) return Status::ok();
    }
    if (write.remove) {
      kube::DeleteOptions options;
      options.uid = write.uid;
      options.gracePeriodSeconds = 0;
      write.removed = client_.remove(podsType(), write.namespaceName, write.name, options);
    }
    return Status::ok();
  });
  const std::lock_guard lock(mutex_);
  for (PodWrite& write : writes) {
    NodeState& state = *write.state;
    const std::string& node = state.node->name;
    const std::string& ns = write.namespaceName;
    const std::string& name = write.name;
    // Anything but a 409 is tried again shortly (the model recomputes from what it sees then).
    const auto retrySoon = [&] {
      const std::int64_t retry = write.nowMs + 500;
      if (!state.wakeAtMs || *state.wakeAtMs > retry) state.wakeAtMs = retry;
    };
    if (write.written) {
      if (write.written->isOk()) {
        ++stats_.statusWrites;
        written_[write.uid] = Written{write.baseResourceVersion, std::move(*write.written).value()};
        logLine(LogLevel::kDebug, cat(ns, "/", name, " on ", node, ": ", write.phase));
      } else {
        // 409: a newer pod is on its way and will make the node dirty again.
        const Status& failed = write.written->status();
        if (failed.code() == StatusCode::kAborted) {
          ++stats_.conflicts;
        } else if (failed.code() != StatusCode::kNotFound) {
          ++stats_.errors;
          logLine(LogLevel::kWarning, cat("status of ", ns, "/", name, ": ", failed.toString()));
        }
        retrySoon();
        continue;
      }
    }
    if (!write.removed) continue;
    if (write.removed->isOk() || write.removed->code() == StatusCode::kNotFound) {
      ++stats_.deletes;
      logLine(LogLevel::kDebug, cat(ns, "/", name, " on ", node, ": deleted"));
    } else {
      ++stats_.errors;
      logLine(LogLevel::kWarning,
              cat("delete of ", ns, "/", name, ": ", write.removed->toString()));
      retrySoon();
    }
  }
}

Status Simulator::run() {
  kube::InformerOptions informerOptions;
  informerOptions.fieldSelector = "spec.nodeName!=";
  informerOptions.onError = [](const Status& status) {
    logLine(LogLevel::kWarning, "pod watch: " + status.toString());
  };
  informer_ = std::make_unique<kube::Informer>(client_, client_, podsType(), informerOptions);
  Status added = informer_->addIndexer(std::string(kube::kNodeIndex), kube::indexByNode);
  if (!added.isOk()) return added;
  kube::EventHandler handler;
  handler.onAdd = [this](const kube::ObjectPtr& pod) { markDirty(*pod); };
  handler.onUpdate = [this](const kube::ObjectPtr& oldPod, const kube::ObjectPtr& newPod) {
    if (oldPod != newPod) markDirty(*newPod);
  };
  handler.onDelete = [this](const kube::ObjectPtr& pod, bool) {
    {
      // The runner is the pod loop's alone: it forgets the pod on its next pass.
      const std::lock_guard lock(mutex_);
      forgotten_.push_back(kube::objectUid(*pod));
    }
    markDirty(*pod);
  };
  added = informer_->addEventHandler(std::move(handler));
  if (!added.isOk()) return added;
  informer_->start();
  while (!stopped_ && !informer_->waitForSync(std::chrono::milliseconds(200))) {
  }
  if (stopped_) return Status::ok();
  logLine(LogLevel::kInfo,
          "pod informer synced: " + std::to_string(informer_->store().size()) + " bound pods");

  std::thread heartbeat([this] { heartbeatLoop(); });
  std::unique_ptr<ControlWatcher> control;
  if (!options_.controlFile.empty())
    control = std::make_unique<ControlWatcher>(options_.controlFile);
  {
    // Every node once at start: a restarted simulator picks up where the statuses say.
    const std::lock_guard lock(mutex_);
    for (const auto& [name, _] : nodes_) dirty_.insert(name);
  }
  while (!stopped_) {
    if (control) {
      if (auto failed = control->poll()) {
        const std::lock_guard lock(mutex_);
        if (*failed != failed_) {
          // Both sides of a change need a pass (NodeLost, or resuming after recovery).
          for (const auto& name : *failed) dirty_.insert(name);
          for (const auto& name : failed_) dirty_.insert(name);
          failed_ = std::move(*failed);
          ++failedVersion_;
          heartbeatWake_.notify_all();
        }
      }
    }
    std::set<std::string> work;
    std::set<std::string> failed;
    std::vector<std::string> forgotten;
    {
      const std::lock_guard lock(mutex_);
      work.swap(dirty_);
      failed = failed_;
      forgotten.swap(forgotten_);
    }
    for (const std::string& uid : forgotten) runner_.forget(uid);
    const std::int64_t now = wallMs();
    for (auto& [name, state] : nodes_) {
      if (state.wakeAtMs && *state.wakeAtMs <= now) work.insert(name);
    }
    std::vector<PodWrite> writes;
    for (const std::string& name : work) {
      if (stopped_) break;
      auto it = nodes_.find(name);
      if (it != nodes_.end()) planNode(it->second, wallMs(), failed.contains(name), writes);
    }
    sendPodWrites(writes);
    std::int64_t sleepMs = options_.tick.count();
    for (const auto& [name, state] : nodes_) {
      if (state.wakeAtMs)
        sleepMs = std::min(sleepMs, std::max<std::int64_t>(0, *state.wakeAtMs - wallMs()));
    }
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, std::chrono::milliseconds(sleepMs),
                   [&] { return stopped_ || !dirty_.empty(); });
  }
  heartbeat.join();
  informer_->stop();
  return Status::ok();
}

}  // namespace kubeslurm::nodesim
