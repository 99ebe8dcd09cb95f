// What runs inside a simulated container: the seam between the kubelet model and a runtime.
//
// The model (kubelet_model.h) owns the pod's lifecycle (admission, waiting, running,
// terminated, restarts, graceful deletion) and asks a Runner only what a container runtime
// knows: has this container exited, with which code, and when. Two runtimes fit behind it:
//  - SimulatedRunner (here, pure): the run time and exit code are read off the container's
//    command (`sleep N`, `exit N`, `sh -c "...; exit N"`) or the pod's annotations;
//  - ProcessRunner (process_runner.h, --process-mode, for the in-pod runtime): start() runs the
//    container's command as a process in namespaces of its own (network, mount, pid, uts), poll()
//    reaps it, stop() sends SIGTERM then SIGKILL at the grace deadline. Its state lives in the
//    runner, keyed by pod uid, container name and restart count, so the model stays a function
//    of the observed pod and `now`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kubeslurm/api/core_v1.h"

namespace kubeslurm::nodesim {

// Pod annotations that override what the command says.
inline constexpr std::string_view kAnnotationRunSeconds = "nodesim.kubeslurm.io/run-seconds";
inline constexpr std::string_view kAnnotationExitCode = "nodesim.kubeslurm.io/exit-code";
inline constexpr std::string_view kAnnotationIgnoreSigterm = "nodesim.kubeslurm.io/ignore-sigterm";

// The variable that carries a kubeslurm batch script to rank 0 (kubeslurm/podspec/rank_pods.cc).
inline constexpr std::string_view kBatchScriptVariable = "KUBESLURM_BATCH_SCRIPT";
// Exit codes a shell reports for a process killed by a signal: 128 + signal number.
inline constexpr std::int32_t kExitSigterm = 143;
inline constexpr std::int32_t kExitSigkill = 137;

// A stable pseudo-random hex string of `chars` digits (FNV-1a, chained): container IDs, image
// digests and process mode's namespace names look like a runtime's and are the same for the
// same seed on every simulator run.
std::string hexId(std::string_view seed, std::size_t chars);

struct RunPlan {
  std::optional<std::int64_t> runMs;  // nullopt: runs until it is stopped
  std::int32_t exitCode = 0;
};

// Reads a run plan off a command line:
//  - `sleep N` (GNU units s/m/h/d, fractions, several operands summed; `infinity`) runs N;
//  - `exit N` ends with N; `true`/`:`/`echo ...` take no time, `false` ends with 1;
//  - a shell (`sh`, `bash`, `dash`, `ash`, with a flag word containing `c`) runs its script:
//    commands split on `;`, `&&`, `||`, `|` and newlines, sleeps summed up to the first `exit`;
//    the exit code is that of `exit N`, else of the last command;
//  - a container with KUBESLURM_BATCH_SCRIPT in its environment runs that script (comment
//    lines such as #! and #SBATCH skipped), as the rank-0 launcher execs it;
//  - nothing recognisable (no sleep, exit, true or false anywhere): runs until stopped, as a
//    server would.
// Annotations run-seconds / exit-code override the parts they name; an exit code alone on a
// command that would run forever makes it exit at once.
RunPlan planFromCommand(const api::Pod& pod, const api::Container& container);

struct ContainerRef {
  const api::Pod& pod;
  const api::Container& container;
  std::int32_t restartCount = 0;
  std::string_view podIP;  // the IP the kubelet model gave the pod (status.podIP)
};

struct RunStatus {
  bool exited = false;
  std::int32_t exitCode = 0;
  std::int64_t finishedAtMs = 0;
  std::string message;  // the termination message (terminationMessagePath's content), if any
  // When the answer may change (a simulated exit time, a kill deadline); nullopt: not before
  // something else changes (a process runner polls on its own cadence).
  std::optional<std::int64_t> checkAtMs;
};

class Runner {
 public:
  virtual ~Runner() = default;
  // The container's incarnation `restartCount` starts at `nowMs`.
  virtual void start(const ContainerRef& ref, std::int64_t nowMs) = 0;
  // Has the incarnation started at `startedAtMs` exited by `nowMs`?
  virtual RunStatus poll(const ContainerRef& ref, std::int64_t startedAtMs, std::int64_t nowMs) = 0;
  // The pod is being deleted: SIGTERM now (first call), SIGKILL once `killAtMs` has passed.
  virtual RunStatus stop(const ContainerRef& ref, std::int64_t startedAtMs, std::int64_t killAtMs,
                         std::int64_t nowMs) = 0;
  // The pod is gone: release what is held for it.
  virtual void forget(std::string_view podUid) = 0;
};

// The runtime of a simulated node: run time and exit code from planFromCommand; SIGTERM ends a
// container at once with 143 unless the pod is annotated ignore-sigterm=true, in which case it
// runs to the grace deadline and is killed with 137.
class SimulatedRunner final : public Runner {
 public:
  void start(const ContainerRef&, std::int64_t) override {}
  RunStatus poll(const ContainerRef& ref, std::int64_t startedAtMs, std::int64_t nowMs) override;
  RunStatus stop(const ContainerRef& ref, std::int64_t startedAtMs, std::int64_t killAtMs,
                 std::int64_t nowMs) override;
  void forget(std::string_view) override {}
};

}  // namespace kubeslurm::nodesim
