// The cluster as the scheduler sees it during one cycle: indices instead of names, and each
// node's free capacity.
//
//   free(node) = allocatable - foreignUsed - what kubeslurm's running jobs hold there
//
// (DESIGN.md invariant 4). Amounts are signed: a snapshot that is already oversubscribed (the
// kubelet admitted more than allocatable, or foreign pods grew) shows negative free capacity,
// which fits nothing, and later releases add back exactly what they took.
//
// Built once per plan() from the Snapshot; the scheduler then changes free capacity as it starts
// jobs. Nothing here allocates per job.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kubeslurm/core/model.h"
#include "kubeslurm/core/topology.h"

namespace kubeslurm::core {

struct Amount {
  std::int64_t gpus = 0;
  std::int64_t cpuMillis = 0;
  std::int64_t memoryBytes = 0;

  Amount& operator+=(const Amount& o) {
    gpus += o.gpus;
    cpuMillis += o.cpuMillis;
    memoryBytes += o.memoryBytes;
    return *this;
  }
  Amount& operator-=(const Amount& o) {
    gpus -= o.gpus;
    cpuMillis -= o.cpuMillis;
    memoryBytes -= o.memoryBytes;
    return *this;
  }
  bool covers(const Amount& want) const {
    return gpus >= want.gpus && cpuMillis >= want.cpuMillis && memoryBytes >= want.memoryBytes;
  }
  friend bool operator==(const Amount&, const Amount&) = default;
};

Amount toAmount(const Resources& r);

// What is free on a node, and how many kubeslurm jobs hold part of it (an exclusive job needs 0).
struct NodeFree {
  Amount amount;
  std::int32_t jobs = 0;
};

// One rank's request on one node.
struct NodeRequest {
  Amount amount;
  bool exclusive = false;
};

inline bool fits(const NodeFree& free, const NodeRequest& request) {
  return free.amount.covers(request.amount) && (!request.exclusive || free.jobs == 0);
}

// A running job's hold on one node, given back when the job reaches its time limit.
struct Release {
  NodeIndex node = 0;
  Time at = 0;
  Amount amount;
  std::uint32_t job = 0;  // index into Snapshot::jobs
};

struct PartitionInfo {
  std::vector<NodeIndex> nodes;       // ascending, unique, valid
  std::vector<std::uint64_t> member;  // bitset over nodes
  std::uint64_t totalGpus = 0;        // allocatable GPUs of its nodes (the TRES factor's base)
  bool contains(NodeIndex n) const { return ((member[n >> 6] >> (n & 63)) & 1) != 0; }
};

class ClusterState {
 public:
  ClusterState(const Snapshot& snapshot, Time now);

  const Snapshot& snapshot() const { return snapshot_; }
  Time now() const { return now_; }
  std::size_t nodeCount() const { return free_.size(); }
  const Topology& topology() const { return topology_; }

  // ---- nodes
  const NodeFree& free(NodeIndex n) const { return free_[n]; }
  std::span<const NodeFree> freeAll() const { return free_; }
  // allocatable - foreignUsed: what an exclusive job takes.
  const Amount& schedulable(NodeIndex n) const { return schedulable_[n]; }
  // Up, and no NoSchedule/NoExecute taint: takes work from jobs that tolerate nothing.
  bool usable(NodeIndex n) const { return usable_[n] != 0; }
  bool isUp(NodeIndex n) const;
  // What a rank of `request` takes on node n: the request, or the whole node when exclusive.
  Amount takenBy(NodeIndex n, const NodeRequest& request) const {
    return request.exclusive ? schedulable_[n] : request.amount;
  }
  void allocate(NodeIndex n, const NodeRequest& request);
  std::optional<NodeIndex> nodeIndex(std::string_view name) const;
  const NodeNameIndex& nodeNames() const { return names_; }

  // ---- partitions
  std::size_t partitionCount() const { return partitions_.size(); }
  const PartitionInfo& partition(std::uint32_t p) const { return partitions_[p]; }
  std::optional<std::uint32_t> partitionIndex(std::string_view name) const;
  // Partitions that contain node n.
  std::span<const std::uint32_t> partitionsOf(NodeIndex n) const;
  // The partition's nodes under one leaf, ascending.
  std::span<const NodeIndex> partitionLeafNodes(std::uint32_t p, std::uint32_t leaf) const;

  // ---- running jobs
  const std::vector<Release>& releases() const { return releases_; }
  // Jobs started this cycle hold their nodes until now + timeLimit.
  void addRelease(const Release& r) { releases_.push_back(r); }

  // ---- totals for the priority factors
  std::uint64_t clusterCpuMillis() const { return clusterCpuMillis_; }

 private:
  void buildNodes();
  void buildPartitions();
  void buildPartitionLeaves();
  void holdRunningJobs();

  const Snapshot& snapshot_;
  Time now_;
  NodeNameIndex names_;
  Topology topology_;
  std::vector<NodeFree> free_;
  std::vector<Amount> schedulable_;
  std::vector<std::uint8_t> usable_;
  std::vector<PartitionInfo> partitions_;
  std::unordered_map<std::string_view, std::uint32_t> partitionByName_;
  std::vector<std::uint32_t> nodePartStart_;  // CSR: partitions of each node
  std::vector<std::uint32_t> nodePartList_;
  std::vector<std::uint32_t> partLeafStart_;  // CSR over (partition, leaf)
  std::vector<NodeIndex> partLeafList_;
  std::vector<Release> releases_;
  std::uint64_t clusterCpuMillis_ = 0;
};

// Whether pods that tolerate `tolerations` and `more` may run on a node with `taints`: every
// taint that keeps pods off (NoSchedule/NoExecute) is tolerated by one of the two lists (a job's
// own and its partition's).
bool toleratesAll(std::span<const Taint> taints, std::span<const Taint> tolerations,
                  std::span<const Taint> more = {});

}  // namespace kubeslurm::core
