// How the in-pod runtime (kubeslurm/inpod: srun, the step agents, rank 0's batch launcher) is wired
// into a rank pod: the names both sides agree on. The operator writes them into the pod
// (rank_pods.cc); the tools read them back.
#pragma once

#include <cstdint>
#include <string_view>

namespace kubeslurm::step {

// The job's step token: every rank pod gets it from the job's Secret; srun presents it to the
// agents, which refuse every call without it.
inline constexpr std::string_view kStepTokenVariable = "KUBESLURM_STEP_TOKEN";
inline constexpr std::string_view kStepTokenSecretKey = "token";
// The port every rank's agent listens on.
inline constexpr std::string_view kStepPortVariable = "KUBESLURM_STEP_PORT";
// slurmd's own default port: the agent plays slurmd's part.
inline constexpr std::uint16_t kDefaultStepAgentPort = 6818;
// "host:port,host:port,...", one per rank in rank order: where srun finds the agents when they
// are not at `<rank hostname>:<port>` (several ranks on one host, as in tests).
inline constexpr std::string_view kStepAgentsVariable = "KUBESLURM_STEP_AGENTS";
// The batch script's stdout and stderr files (sbatch --output/--error, expanded), on the
// partition's shared volume; unset: the rank-0 pod's log. KUBESLURM_STDERR unset with
// KUBESLURM_STDOUT set: both in one file, as Slurm does without --error.
inline constexpr std::string_view kStdoutVariable = "KUBESLURM_STDOUT";
inline constexpr std::string_view kStderrVariable = "KUBESLURM_STDERR";
// "append" (--open-mode=append) or "truncate" (the default: JobFileAppend=0).
inline constexpr std::string_view kOpenModeVariable = "KUBESLURM_OPEN_MODE";
// Where the init container puts the tools image's /opt/kubeslurm (bin/ and lib/).
inline constexpr std::string_view kToolsMountPath = "/kubeslurm";

}  // namespace kubeslurm::step
