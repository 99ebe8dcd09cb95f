// Interactive allocations for a login host: what `srun` outside a job and `salloc` hold while
// their steps or shell run. An allocation is a SlurmJob with spec.interactive (no script: rank 0
// holds the nodes and serves steps), submitted as sbatch submits, waited for as Slurm's
// srun/salloc wait (src/api/allocate.c: "job N queued and waiting for resources", "job N has
// been allocated resources"), and reached through the operator's step proxy
// (kubeslurm/rpc/step_proxy.h) with the caller's own Kubernetes credentials.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/cli/commands.h"
#include "kubeslurm/cli/kube_access.h"
#include "kubeslurm/rpc/client.h"

namespace kubeslurm::cli {

struct LoginAllocation {
  ClusterSession session;  // kept: a revocation writes through it
  std::string namespaceName;
  std::string jobName;
  std::int64_t jobId = 0;
  // The job's SLURM_* variables as its rank 0 has them (its pod's environment): what a step's
  // layout reads and what salloc's shell gets.
  std::map<std::string, std::string> environment;
  rpc::ClientOptions endpoint;  // the operator's query API, with the caller's bearer token
};

struct AllocationOutcome {
  std::optional<LoginAllocation> allocation;
  int exitCode = 1;  // when there is no allocation: the command's exit status
};

// Submits an allocation of srun's (or salloc's) allocation options and waits until it runs.
// `program` ("srun", "salloc") names the messages; `command` names the job as Slurm does (its
// first word's base name; "interactive" without one). `interrupted` is polled while the job
// waits: true revokes it. Everything it has to say it prints on io.err.
AllocationOutcome allocateInteractive(std::string_view program, const SrunOptions& options,
                                      const std::vector<std::string>& command, CliIo& io,
                                      const std::function<bool()>& interrupted);
AllocationOutcome allocateInteractiveWith(std::string_view program, const SrunOptions& options,
                                          const std::vector<std::string>& command, CliIo& io,
                                          const std::function<bool()>& interrupted,
                                          const SubmitEnvironment& environment);

// What salloc's shell (or command) carries besides the job's SLURM_* variables: the allocation's
// SlurmJob as "<namespace>/<name>", so that srun in it runs its steps there, through the step
// proxy, as salloc reached it.
inline constexpr std::string_view kAllocationVariable = "KUBESLURM_ALLOCATION";

// srun inside salloc's shell: the allocation `job` ("<namespace>/<name>") names, with the
// caller's session and the operator's query API found as for any command. `jobId` is
// SLURM_JOB_ID. Error: `job` is not "<namespace>/<name>", or no session or endpoint.
StatusOr<LoginAllocation> joinAllocation(const std::string& job, std::int64_t jobId, CliIo& io);

// srun --jobid=N on a login host: job N of the caller's namespace as a step needs it (its
// SLURM_* variables from rank 0's pod, the session and the query API). Errors in srun's words
// (allocate.c existing_allocation): kNotFound "Invalid job id specified", kFailedPrecondition
// when it does not run ("Job/step already completing or completed" once it ended).
StatusOr<LoginAllocation> runningJob(std::int64_t jobId, CliIo& io);

// Cancels an allocation the login side gives up before it could release it through its rank 0
// (spec.cancel, as scancel does).
Status revokeAllocation(const LoginAllocation& allocation);

// The job's SLURM_* variables from a rank pod's JSON: the rank container's literal env values.
std::map<std::string, std::string> jobVariablesOfPod(const nlohmann::json& pod);

}  // namespace kubeslurm::cli
