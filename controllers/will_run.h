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

// sbatch --test-only's request: a SlurmJob as JSON, submitted in `jobNamespace`. A will-run test
// uses up a job id, as slurmctld's does (`nextJobId`). kInvalidArgument when the text is not a
// SlurmJob; planWillRun's errors otherwise.
StatusOr<WillRunAnswer> willRunFromJson(const WillRunCluster& cluster,
                                        const std::string& jobNamespace,
                                        const std::string& slurmJobJson,
                                        const std::function<StatusOr<std::int64_t>()>& nextJobId,
                                        const std::string& defaultUser, core::Time now,
                                        const core::Budget& budget);

}  // namespace kubeslurm::controllers
