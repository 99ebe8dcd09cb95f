// From the core's decision to start a job to the objects that run it: a core::Start becomes the
// podspec::GangInput the gang binder admits. PURE: every value comes from the snapshot and the
// informer objects it was built from, so a retried admission builds the same pods.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

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

// Who runs a gang, as the scheduler decided: the job's id and attempt, and the user, account and
// QOS after their defaults.
struct GangIdentity {
  std::int64_t jobId = 0;
  std::uint32_t attempt = 0;
  std::string user;
  std::string account;
  std::string qos;
};

// The node name a pod check places its one rank on.
inline constexpr std::string_view kCheckNode = "kubeslurm-pod-check";

// Whether the job's pods can be made as written, on a one-rank gang on a placeholder node: the
// pod template, the image, the environment, the Pyxis mounts against `partition`.
// kInvalidArgument with the reason otherwise. Planning runs it before a job may hold nodes, so
// that a job which can never start is reported instead of rolled back over and over.
Status checkJobPods(const api::SlurmJobObject& job, const api::Partition& partition,
                    const GangIdentity& who, const AdmissionOptions& options);

// The rank-0 pod checkJobPods builds (on kCheckNode), for a dry run against the API server.
StatusOr<api::Pod> checkPod(const api::SlurmJobObject& job, const api::Partition& partition,
                            const GangIdentity& who, const AdmissionOptions& options);

// kNotFound when the start names a job or node the index does not know (the snapshot and the
// objects disagree: a programming error upstream); kInvalidArgument when the job cannot be run
// as written (no image...), which the job controller reports as a condition.
StatusOr<podspec::GangInput> gangForStart(const core::Start& start, const SnapshotIndex& index,
                                          const ClusterObjects& objects,
                                          const AdmissionOptions& options);

}  // namespace kubeslurm::controllers
