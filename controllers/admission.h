// From the core's decision to start a job to the objects that run it: a core::Start becomes the
// podspec::GangInput the gang binder admits. PURE: every value comes from the snapshot and the
// informer objects it was built from, so a retried admission builds the same pods.
#pragma once

#include <cstdint>
#include <string>

#include "controllers/snapshot.h"
#include "kubeslurm/base/status.h"
#include "kubeslurm/core/model.h"
#include "kubeslurm/podspec/rank_pods.h"

namespace kubeslurm::controllers {

struct AdmissionOptions {
  std::string clusterName = "kubeslurm";  // SLURM_CLUSTER_NAME
  std::string clusterDomain = "cluster.local";
  std::string schedulerName = std::string(podspec::kDefaultSchedulerName);
  // The image for script jobs that name none (no --container-image, no pod template).
  std::string defaultImage;
  // The in-pod tools image (srun, scontrol, step agents); empty: script jobs run without them.
  std::string toolsImage;
  // Slurm's KillWait: SIGTERM to SIGKILL when a gang is stopped (time limit, scancel).
  std::int64_t killWaitSeconds = 30;
};

// kNotFound when the start names a job or node the index does not know (the snapshot and the
// objects disagree: a programming error upstream); kInvalidArgument when the job cannot be run
// as written (no image...), which the job controller reports as a condition.
StatusOr<podspec::GangInput> gangForStart(const core::Start& start, const SnapshotIndex& index,
                                          const ClusterObjects& objects,
                                          const AdmissionOptions& options);

}  // namespace kubeslurm::controllers
