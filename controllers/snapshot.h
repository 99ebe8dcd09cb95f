// Informer caches -> the scheduling core's Snapshot. PURE: no I/O, no clock (`now` is given),
// the same objects always give the same snapshot (nodes and partitions are sorted by name, so a
// NodeIndex does not depend on the order an informer listed them in).
//
// Capacity follows DESIGN.md invariant 4: a node offers its allocatable minus the requests of
// every non-terminal pod bound to it. A RUNNING job's rank pods of its current attempt are
// charged through the job's allocation (so that preemption can see them); every other bound,
// non-terminal pod -- inference, system pods, and our own pods that no running job accounts for
// (a cancelled gang still terminating, a stale attempt) -- is `foreignUsed`: the kubelet still
// counts it, so the scheduler must too.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "controllers/shared_list.h"
#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/core/model.h"

namespace kubeslurm::controllers {

// A comma list of node features (slurm.conf Features=), matched by --constraint.
inline constexpr std::string_view kFeaturesLabel = "kubeslurm.io/features";
// GPU feature discovery's product label ("NVIDIA-A100-SXM4-80GB"): a feature too.
inline constexpr std::string_view kGpuProductLabel = "nvidia.com/gpu.product";
// Tree levels used when no partition names its own: leaf switch, then spine.
inline constexpr std::string_view kLeafLabel = "kubeslurm.io/leaf";
inline constexpr std::string_view kSpineLabel = "kubeslurm.io/spine";

// What the informers hold, decoded. Nodes, pods and jobs are the cluster view's records, shared
// (SharedList): a cycle that changes one gets its own copy.
struct ClusterObjects {
  SharedList<api::Node> nodes;
  SharedList<api::Pod> pods;  // all namespaces
  SharedList<api::SlurmJobObject> jobs;
  std::vector<api::Partition> partitions;
  std::vector<api::Account> accounts;
};

struct SnapshotOptions {
  core::SchedulerConfig config;
  std::string defaultUser = "nobody";  // for a SlurmJob without spec.user
};

// An object that cannot be scheduled as written. The job controller turns it into a condition
// (and the job keeps its state: invariant 5, nothing is dropped silently).
struct JobProblem {
  std::string key;     // "ns/name"
  std::string reason;  // condition reason, e.g. "InvalidPartition"
  std::string message;
};

struct SnapshotIndex {
  core::Snapshot snapshot;
  std::vector<std::string> nodeNames;          // by NodeIndex
  std::map<core::JobId, std::string> jobKeys;  // pending and running jobs: "ns/name"
  std::vector<JobProblem> problems;            // jobs left out of the snapshot, and why
  std::vector<JobProblem> partitionProblems;   // key: the partition's name
  // Pending jobs left out because pods of their current attempt exist: a gang is being bound or
  // torn down, and only the binder or the job controller may act on it (invariant 1).
  std::set<std::string> gangsInFlight;
};

// Jobs the job controller holds out of the plan for what the objects alone do not show
// (admission_holds.h): pods that cannot be made as written, and admissions that wait out a
// backoff. Keys are "ns/name".
struct JobHolds {
  std::map<std::string, JobProblem> invalid;     // left out, with the problem reported
  std::map<std::string, core::Time> retryAfter;  // planned as if submitted with this begin time
};

SnapshotIndex buildSnapshot(const ClusterObjects& objects, const SnapshotOptions& options,
                            core::Time now, const JobHolds& holds = {});

}  // namespace kubeslurm::controllers
