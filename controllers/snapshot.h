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

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
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

// Pending and running jobs' keys ("ns/name") by id. The snapshot adds them in ascending id
// order, so a sorted vector serves the lookups: a tree node per job was a tenth of building and
// freeing a snapshot of 30,000 pending jobs.
class JobKeys {
 public:
  using value_type = std::pair<core::JobId, std::string>;
  using const_iterator = std::vector<value_type>::const_iterator;

  JobKeys() = default;
  JobKeys(std::initializer_list<value_type> keys);  // any order; a repeated id keeps the first

  const_iterator begin() const { return keys_.begin(); }
  const_iterator end() const { return keys_.end(); }
  const_iterator find(core::JobId id) const;
  bool contains(core::JobId id) const { return find(id) != end(); }
  const std::string& at(core::JobId id) const;  // throws std::out_of_range, as map::at
  bool empty() const { return keys_.empty(); }
  std::size_t size() const { return keys_.size(); }

  void reserve(std::size_t count) { keys_.reserve(count); }
  // `id` above every id added before (the snapshot's ascending walk).
  void append(core::JobId id, std::string key);
  // Removes the keys of `ids` (ascending), in one pass.
  void erase(const std::vector<core::JobId>& ids);

 private:
  std::vector<value_type> keys_;
};

struct SnapshotIndex {
  core::Snapshot snapshot;
  std::vector<std::string> nodeNames;         // by NodeIndex
  JobKeys jobKeys;                            // pending and running jobs
  std::vector<JobProblem> problems;           // jobs left out of the snapshot, and why
  std::vector<JobProblem> partitionProblems;  // key: the partition's name
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

// The nodes one build translated, kept for the next. The cluster view hands a cycle the same
// shared record for a node that has not changed and a new record for one that has, so a node
// whose record the build before translated translates as it did then: the build copies that
// core::Node instead of parsing its quantities, taints and features again (at 5,000 nodes, 15 ms
// of the snapshot's ~85 became 6). A build with a memo gives the snapshot a build without one
// gives; the memo holds each record it translated (so that its address names that record and no
// other) until a build no longer sees it. Pending jobs are not kept so: their translation was
// measured at 5 ms of savings for 28 MiB (a second copy of every pending core::Job), against the
// operator's memory budget (docs/operator.md).
class SnapshotMemo {
 public:
  SnapshotMemo();
  ~SnapshotMemo();
  SnapshotMemo(const SnapshotMemo&) = delete;
  SnapshotMemo& operator=(const SnapshotMemo&) = delete;

  struct Nodes;  // snapshot.cc's
  Nodes& nodes() { return *nodes_; }
  // Nodes the last build copied from the memo, and those it translated afresh.
  std::uint64_t lastHits() const;
  std::uint64_t lastMisses() const;

 private:
  std::unique_ptr<Nodes> nodes_;
};

// A node's features as --constraint matches them: kFeaturesLabel's list (slurm.conf's
// Features=), the GPU product label, and the node's GPU types (gpuTypeFeatures).
std::vector<std::string> nodeFeatures(const api::Node& node);

// `memo`, when given, carries translations from one build to the next (one build at a time).
SnapshotIndex buildSnapshot(const ClusterObjects& objects, const SnapshotOptions& options,
                            core::Time now, const JobHolds& holds = {},
                            SnapshotMemo* memo = nullptr);

}  // namespace kubeslurm::controllers
