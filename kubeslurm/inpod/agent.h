// The step agent: slurmd's part in a rank pod. It starts the tasks `srun` sends it (each a
// TaskProcess), feeds them srun's stdin (and a --pty task's window size), streams their output
// and their ends back, delivers signals to them, and kills them when their srun goes away. Rank 0's
// agent also numbers the job's steps and keeps the records of those that ended.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/base/status.h"
#include "kubeslurm/step/pod_contract.h"
#include "kubeslurm/step/step_records.h"

namespace kubeslurm::inpod {

// The variables the operator puts in every rank pod for the in-pod runtime.
inline constexpr std::string_view kTokenVariable = step::kStepTokenVariable;
inline constexpr std::string_view kPortVariable = step::kStepPortVariable;
inline constexpr std::string_view kAgentsVariable = step::kStepAgentsVariable;
inline constexpr std::uint16_t kDefaultAgentPort = step::kDefaultStepAgentPort;

struct AgentOptions {
  std::string listenAddress;  // "0.0.0.0:6818"; port 0 picks a free one (tests)
  std::string token;          // callers must present it; never empty
  // How long tasks whose srun went away get between SIGTERM and SIGKILL (slurm.conf KillWait).
  std::chrono::milliseconds killWait{std::chrono::seconds(30)};
};

class Agent {
 public:
  virtual ~Agent() = default;
  virtual int port() const = 0;
  // The finished steps srun reported (RecordStep), by step id.
  virtual std::vector<step::StepRecord> steps() const = 0;
  // Stops serving and kills every task still running (SIGKILL after killWait). Idempotent.
  virtual void stop() = 0;
};

// The agents' port as the rank pod's environment gives it (KUBESLURM_STEP_PORT), slurmd's
// 6818 when unset; kInvalidArgument "KUBESLURM_STEP_PORT is not a port: X" otherwise.
StatusOr<std::uint16_t> agentPort(const std::map<std::string, std::string>& environment);

// Errors: an empty token (kInvalidArgument), an address that cannot be bound (kUnavailable).
// `onRelease`: set on rank 0 of an interactive allocation, what a Release call hands over (the
// job's exit code); unset, the agent refuses Release.
StatusOr<std::unique_ptr<Agent>> startAgent(const AgentOptions& options,
                                            std::function<void(int exitCode)> onRelease = {});

}  // namespace kubeslurm::inpod
