// What the integration suites that run the real kubeslurm-operator share: the operator as a child
// process with its log in the sandbox, and the set-up every such suite does first (CRDs
// established, the operator's namespace).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include <sys/types.h>

#include "tests/integration/support/sandbox_env.h"

namespace kubeslurm::testing_support {

// One kubeslurm-operator process, its stdout and stderr appended to `logFile` (so a failed run
// shows every incarnation), with the flags the suites share: the sandbox's kubeconfig, namespace
// kubeslurm-system, a 1 s scheduling interval, 0.1 s between cycles, kill-wait 2 s, and metrics
// and probes on ports the kernel picks.
class OperatorProcess {
 public:
  OperatorProcess(std::string binary, std::string identity, std::string logFile,
                  std::vector<std::string> extraArgs = {});
  ~OperatorProcess();
  OperatorProcess(const OperatorProcess&) = delete;
  OperatorProcess& operator=(const OperatorProcess&) = delete;

  // Starts it; the same identity after a crash holds the Lease at once, as client-go's would.
  bool start();
  // SIGTERM: a clean stop (the Lease is released); SIGKILL: a crash at whatever instant.
  void stop(int signal);
  bool running() const { return pid_ > 0; }
  // Waits for it to end by itself (a --crash-at kill); the signal that ended it, 0 for an
  // exit, -1 when it still runs after `timeout`.
  int waitForExit(std::chrono::milliseconds timeout);
  std::string log() const { return readFile(logFile_); }
  // Occurrences of `needle` in the log.
  std::size_t count(const std::string& needle) const;
  // Waits until it has run its first recovery pass, i.e. leads and schedules.
  bool waitForLeadership(std::chrono::milliseconds timeout) const;
  // The last `bytes` of the log, for a failure message.
  std::string logTail(std::size_t bytes = 6000) const;

 private:
  std::string binary_;
  std::string identity_;
  std::string logFile_;
  std::vector<std::string> extraArgs_;
  pid_t pid_ = 0;
};

// CRDs from `sourceDir`/crds applied and Established, and namespace kubeslurm-system created.
// "" on success, else what failed with kubectl's output.
std::string installCrdsAndOperatorNamespace(const std::string& sourceDir);

// Waits for the namespace's default ServiceAccount token: until controller-manager adds it, the
// ServiceAccount admission plugin refuses pods.
bool waitForServiceAccountToken(const std::string& namespaceName,
                                std::chrono::milliseconds timeout);

}  // namespace kubeslurm::testing_support
