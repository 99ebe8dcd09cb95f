// The node simulator's I/O shell: it plays the kubelets of many nodes against a real API server.
//
//   registerNodes()   Node objects created with their status (or re-labelled and re-reported
//                     when they exist), a Lease per node in kube-node-lease
//   heartbeat thread  every --heartbeat (10 s) renews the Lease of every node that is not
//                     failed; every --node-status-interval (40 s) refreshes the Ready
//                     condition's lastHeartbeatTime; a recovered node reports at once
//   pod informer      one list+watch over all pods with spec.nodeName set, indexed by node
//   pod loop          each tick (100 ms): re-reads the control file; for every node with a
//                     changed pod or a deadline due, runs the kubelet model (kubelet_model.h)
//                     over the node's observed pods, then writes what it says for all of them:
//                     per pod the status subresource (PUT with the observed resourceVersion: a
//                     409 only means a newer pod is on its way), then a delete with grace
//                     period 0
//
// One HTTPS client for everything (no connection per node). The pod loop's writes and the
// heartbeat's renewals go out 16 at a time (kube/run_bounded.h), as many kubelets' would: the
// simulator must not be what limits a scheduler under test. The rate is bounded by the
// client's QPS (--qps).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/base/status.h"
#include "kubeslurm/kube/client.h"
#include "kubeslurm/kube/informer.h"
#include "kubeslurm/nodesim/control.h"
#include "kubeslurm/nodesim/kubelet_model.h"
#include "kubeslurm/nodesim/runner.h"
#include "kubeslurm/nodesim/shape.h"

namespace kubeslurm::nodesim {

enum class LogLevel { kDebug, kInfo, kWarning, kError };
// "debug", "info", "warning", "error"; false for anything else.
bool parseLogLevel(std::string_view text, LogLevel& level);
void setLogLevel(LogLevel level);
void logLine(LogLevel level, const std::string& message);

struct SimulatorOptions {
  std::vector<SimNode> nodes;
  ModelOptions model;
  std::chrono::milliseconds leaseInterval{10'000};  // the kubelet's renew interval
  std::int32_t leaseDurationSeconds = 40;
  std::chrono::milliseconds statusInterval{40'000};
  std::chrono::milliseconds tick{100};
  std::string controlFile;  // "" = no failure injection
};

struct SimulatorStats {
  std::uint64_t statusWrites = 0;
  std::uint64_t conflicts = 0;
  std::uint64_t deletes = 0;
  std::uint64_t leaseRenewals = 0;
  std::uint64_t nodeStatusReports = 0;
  std::uint64_t errors = 0;
};

class Simulator {
 public:
  Simulator(kube::Client& client, SimulatorOptions options, Runner& runner);
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // Creates or refreshes every Node and its Lease. Fails on the first error that a retry
  // would not cure (kInvalidArgument, kPermissionDenied...).
  Status registerNodes();

  // Runs until stop(): the informer, the heartbeat thread and the pod loop (on this thread).
  Status run();
  // From any thread (a signal-handling one).
  void stop();

  SimulatorStats stats() const;

 private:
  struct NodeState {
    const SimNode* node = nullptr;
    std::string uid;
    std::int64_t readySinceS = 0;
    std::optional<std::int64_t> wakeAtMs;
  };
  // nlohmann::json moves without throwing (as WatchEvent in watch_framing.h).
  // NOLINTNEXTLINE(bugprone-exception-escape)
  struct Written {
    std::string baseResourceVersion;  // the pod we acted on
    nlohmann::json object;            // what the server answered
  };

  Status registerNode(NodeState& state, const nlohmann::json* existing, std::int64_t nowMs);
  void heartbeatLoop();
  void renewLease(NodeState& state, std::int64_t nowMs);
  void reportStatus(NodeState& state, std::int64_t nowMs);
  // What the kubelet model says for one node's pods, as writes still to send.
  struct PodWrite {
    NodeState* state = nullptr;
    std::int64_t nowMs = 0;
    std::string namespaceName;
    std::string name;
    std::string uid;
    std::string baseResourceVersion;
    std::optional<nlohmann::json> status;  // the pod with its new status
    std::string phase;                     // for the log
    bool remove = false;
    std::optional<StatusOr<nlohmann::json>> written;  // the status write's answer
    std::optional<Status> removed;                    // the delete's
  };
  void planNode(NodeState& state, std::int64_t nowMs, bool failed, std::vector<PodWrite>& writes);
  // Sends every write (in parallel, a pod's own in order), then records each outcome.
  void sendPodWrites(std::vector<PodWrite>& writes);
  void markDirty(const nlohmann::json& pod);
  std::set<std::string> failedNodes() const;

  kube::Client& client_;
  const SimulatorOptions options_;
  Runner& runner_;
  std::map<std::string, NodeState, std::less<>> nodes_;
  std::unique_ptr<kube::Informer> informer_;
  std::map<std::string, Written> written_;  // pod uid -> our last write (pod loop only)

  std::atomic<bool> stopped_{false};
  mutable std::mutex mutex_;
  std::condition_variable wake_;           // pod loop: dirty nodes or stop
  std::condition_variable heartbeatWake_;  // heartbeat: failures changed or stop
  std::set<std::string> dirty_;
  std::set<std::string> failed_;
  std::vector<std::string> forgotten_;  // uids of deleted pods, for the runner (pod loop)
  std::uint64_t failedVersion_ = 0;
  SimulatorStats stats_;
};

}  // namespace kubeslurm::nodesim
