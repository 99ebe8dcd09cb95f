#include "kubeslurm/core/capacity_index.h"

#include <algorithm>
#include <limits>

namespace kubeslurm::core {

namespace {
constexpr std::int64_t kBuckets = CapacityIndex::kTopBucket + 1;
constexpr std::int64_t kNoBound = std::numeric_limits<std::int64_t>::max();

bool nonNegative(const Amount& a) { return a.gpus >= 0 && a.cpuMillis >= 0 && a.memoryBytes >= 0; }
}  // namespace

CapacityIndex::CapacityIndex(const ClusterState& state)
    : state_(state), leaves_(state.topology().leafCount()) {
  const std::size_t slots =
      state.partitionCount() * leaves_ * static_cast<std::size_t>(kBuckets) * 2;
  buckets_.assign(slots, Bucket{0, kNoBound, kNoBound});
  const std::size_t nodes = state.nodeCount();
  closed_.assign(nodes, 0);
  indexed_.assign(nodes, 0);
  bucketOf_.assign(nodes, 0);
  idleOf_.assign(nodes, 0);
  for (std::size_t n = 0; n < nodes; ++n) {
    insert(static_cast<NodeIndex>(n));
  }
}

std::size_t CapacityIndex::slot(std::uint32_t p, std::uint32_t leaf, std::int64_t bucket,
                                bool idle) const {
  const std::size_t base = (static_cast<std::size_t>(p) * leaves_ + leaf) * kBuckets;
  return (base + static_cast<std::size_t>(bucket)) * 2 + (idle ? 1 : 0);
}

void CapacityIndex::add(NodeIndex n, int delta) {
  const NodeFree& f = state_.free(n);
  const std::uint32_t leaf = state_.topology().leafOf(n);
  for (std::uint32_t p : state_.partitionsOf(n)) {
    for (int idle = 0; idle <= idleOf_[n]; ++idle) {
      Bucket& b = buckets_[slot(p, leaf, bucketOf_[n], idle != 0)];
      if (delta > 0) {
        ++b.count;
        b.minCpu = std::min(b.minCpu, f.amount.cpuMillis);
        b.minMemory = std::min(b.minMemory, f.amount.memoryBytes);
      } else if (--b.count == 0) {
        b.minCpu = kNoBound;
        b.minMemory = kNoBound;
      }
    }
  }
}

void CapacityIndex::insert(NodeIndex n) {
  const NodeFree& f = state_.free(n);
  if (!open(n) || !nonNegative(f.amount)) return;
  bucketOf_[n] = static_cast<std::int8_t>(std::min(f.amount.gpus, kTopBucket));
  idleOf_[n] = f.jobs == 0 ? 1 : 0;
  indexed_[n] = 1;
  add(n, +1);
}

void CapacityIndex::remove(NodeIndex n) {
  if (indexed_[n] == 0) return;
  add(n, -1);
  indexed_[n] = 0;
}

void CapacityIndex::close(NodeIndex n) {
  remove(n);
  closed_[n] = 1;
}

std::uint32_t CapacityIndex::scan(std::uint32_t p, std::uint32_t leaf,
                                  const NodeRequest& request) const {
  std::uint32_t count = 0;
  for (NodeIndex n : state_.partitionLeafNodes(p, leaf)) {
    if (open(n) && fits(state_.free(n), request)) ++count;
  }
  return count;
}

std::uint32_t CapacityIndex::countFits(std::uint32_t p, std::uint32_t leaf,
                                       const NodeRequest& request) const {
  if (request.amount.gpus > kTopBucket) return scan(p, leaf, request);
  std::uint32_t count = 0;
  for (std::int64_t b = std::max<std::int64_t>(request.amount.gpus, 0); b < kBuckets; ++b) {
    const Bucket& bucket = buckets_[slot(p, leaf, b, request.exclusive)];
    if (bucket.count == 0) continue;
    if (bucket.minCpu < request.amount.cpuMillis || bucket.minMemory < request.amount.memoryBytes) {
      return scan(p, leaf, request);
    }
    count += bucket.count;
  }
  return count;
}

}  // namespace kubeslurm::core
