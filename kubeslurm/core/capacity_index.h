// How many nodes of each (partition, leaf) can take one rank of a request right now, without
// looking at every node: the main pass asks this once per leaf per job, so it must cost far less
// than a scan of 5,000 nodes.
//
// Nodes are counted in buckets by free GPUs (0..kTopBucket, the top bucket holding "that many or
// more"), once among all open nodes and once among the idle ones (no kubeslurm job: what an
// exclusive job needs). Each bucket also keeps a lower bound of its nodes' free CPU and memory.
// A request whose CPU and memory are within those bounds fits every node of the bucket, so the
// count is a sum of bucket counts; otherwise (CPU or memory may bind, or more GPUs than the top
// bucket tells apart) the leaf is scanned. Either way the answer is exact.
//
// The bounds only ever fall while a cycle runs (a node leaving a bucket does not raise them):
// a stale bound is low, which only sends a query to the exact scan.
//
// A node is open while it is usable (up, untainted) and the main pass has not closed it (Slurm
// closes the nodes of a partition whose top job could not start, so lower jobs cannot take them).
#pragma once

#include <cstdint>
#include <vector>

#include "kubeslurm/core/cluster_state.h"

namespace kubeslurm::core {

class CapacityIndex {
 public:
  static constexpr std::int64_t kTopBucket = 16;

  explicit CapacityIndex(const ClusterState& state);

  // Usable and not closed: counted here.
  bool open(NodeIndex n) const { return state_.usable(n) && closed_[n] == 0; }
  bool closed(NodeIndex n) const { return closed_[n] != 0; }
  // Keeps the main pass off the node for the rest of the cycle.
  void close(NodeIndex n);
  // Call around every change of the node's free capacity.
  void remove(NodeIndex n);
  void insert(NodeIndex n);

  // Exact number of open nodes of partition p under `leaf` that fit one rank of `request`.
  std::uint32_t countFits(std::uint32_t p, std::uint32_t leaf, const NodeRequest& request) const;
  // Open nodes of partition p under `leaf` with `gpus` free GPUs (below kTopBucket), all or only
  // the idle ones: candidates, whose CPU and memory still need checking.
  std::uint32_t bucketCount(std::uint32_t p, std::uint32_t leaf, std::int64_t gpus,
                            bool idle) const {
    return buckets_[slot(p, leaf, gpus, idle)].count;
  }

 private:
  struct Bucket {
    std::uint32_t count = 0;
    std::int64_t minCpu = 0;
    std::int64_t minMemory = 0;
  };
  std::size_t slot(std::uint32_t p, std::uint32_t leaf, std::int64_t bucket, bool idle) const;
  std::uint32_t scan(std::uint32_t p, std::uint32_t leaf, const NodeRequest& request) const;
  void add(NodeIndex n, int delta);

  const ClusterState& state_;
  std::uint32_t leaves_;
  std::vector<Bucket> buckets_;
  std::vector<std::uint8_t> closed_;
  std::vector<std::uint8_t> indexed_;  // in the buckets under its current free capacity
  std::vector<std::int8_t> bucketOf_;  // the GPU bucket it was indexed under
  std::vector<std::uint8_t> idleOf_;
};

}  // namespace kubeslurm::core
