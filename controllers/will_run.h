// `sbatch --test-only`: where and when a job would start if it were submitted now. PURE.
//
// slurmctld answers from its current state with the job added (job_allocate with will_run) and
// prints "Job N to start at T using P processors on nodes H in partition P". Here the state is
// the last cycle's snapshot with that cycle's own decisions applied (started gangs running,
// preempted victims gone), so a what-if never counts nodes the operator is binding right now as
// free; the plan is the same core::plan the operator runs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controllers/snapshot.h"
#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/base/status.h"
#include "kubeslurm/core/model.h"
#include "kubeslurm/slurm/sbatch_options.h"

namespace kubeslurm::controllers {

// The cluster as a cycle leaves it: `plan`'s starts running since `now`, its preemption victims
// removed.
void applyPlan(core::Snapshot& snapshot, const core::Plan& plan, core::Time now);

struct WillRunResult {
  core::Time start = 0;
  std::uint32_t processors = 0;  // CPUs over all nodes, as slurmctld counts them
  std::string nodes;             // hostlist of the nodes it would get
  std::string partition;
};

// Errors carry slurmctld's words: an invalid partition or request (kInvalidArgument), a job no
// node configuration can ever hold (kResourceExhausted, "Requested node configuration is not
// available"), and a job that waits on something other than resources (kFailedPrecondition,
// with the pending reason), for which slurmctld's will-run test gives no start either.
StatusOr<WillRunResult> planWillRun(const SnapshotIndex& cluster,
                                    const std::vector<api::Partition>& partitions,
                                    const slurm::JobRequest& request, const std::string& user,
                                    const std::string& defaultAccount, core::JobId id,
                                    core::Time now, const core::Budget& budget);

// What a will-run test plans against: the cluster as the last cycle left it.
struct WillRunCluster {
  std::shared_ptr<const SnapshotIndex> index;
  std::vector<api::Partition> partitions;
  std::vector<api::Account> accounts;
};

struct WillRunAnswer {
  std::int64_t jobId = 0;
  WillRunResult result;
};

// sbatch --test-only's request: a SlurmJob as the API server would store it (the admission
// webhook's rules applied, so spec.user is the authenticated submitter's), in `jobNamespace`,
// planned as job `jobId`. slurmctld uses up a job id for a will-run test; here the caller passes
// the id the next submission would get without reserving it, so a what-if costs no id and no
// write (security review C3). kInvalidArgument when the object is not a SlurmJob or names no
// user; planWillRun's errors otherwise.
StatusOr<WillRunAnswer> willRunForJob(const WillRunCluster& cluster,
                                      const std::string& jobNamespace,
                                      const nlohmann::json& slurmJob, std::int64_t jobId,
                                      core::Time now, const core::Budget& budget);

}  // namespace kubeslurm::controllers
