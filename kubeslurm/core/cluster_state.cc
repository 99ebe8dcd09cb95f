#include "kubeslurm/core/cluster_state.h"

#include <algorithm>

namespace kubeslurm::core {

namespace {

std::int64_t toSigned(std::uint64_t v) {
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  return static_cast<std::int64_t>(std::min(v, kMax));
}

bool keepsPodsOff(const Taint& taint) {
  return taint.effect == "NoSchedule" || taint.effect == "NoExecute";
}

// A toleration with no key tolerates every taint (Kubernetes' operator Exists with an empty key).
bool tolerates(const Taint& toleration, const Taint& taint) {
  return (toleration.key.empty() || toleration.key == taint.key) &&
         (toleration.value.empty() || toleration.value == taint.value) &&
         (toleration.effect.empty() || toleration.effect == taint.effect);
}

}  // namespace

Amount toAmount(const Resources& r) {
  return {static_cast<std::int64_t>(r.gpus), toSigned(r.cpuMillis), toSigned(r.memoryBytes)};
}

bool toleratesAll(std::span<const Taint> taints, std::span<const Taint> tolerations,
                  std::span<const Taint> more) {
  const auto tolerated = [](const Taint& taint, std::span<const Taint> list) {
    return std::any_of(list.begin(), list.end(),
                       [&](const Taint& t) { return tolerates(t, taint); });
  };
  return std::all_of(taints.begin(), taints.end(), [&](const Taint& taint) {
    return !keepsPodsOff(taint) || tolerated(taint, tolerations) || tolerated(taint, more);
  });
}

ClusterState::ClusterState(const Snapshot& snapshot, Time now) : snapshot_(snapshot), now_(now) {
  names_.reserve(snapshot.nodes.size());
  for (std::size_t n = 0; n < snapshot.nodes.size(); ++n) {
    names_.emplace(snapshot.nodes[n].name, static_cast<NodeIndex>(n));
  }
  if (snapshot.topology.switches.empty() && snapshot.topology.blocks.empty() &&
      !snapshot.topologyLabels.empty()) {
    topology_ = Topology::fromConf(topologyFromLabels(snapshot.nodes, snapshot.topologyLabels),
                                   snapshot.nodes.size(), names_);
  } else {
    topology_ = Topology::fromConf(snapshot.topology, snapshot.nodes.size(), names_);
  }
  buildNodes();
  buildPartitions();
  buildPartitionLeaves();
  holdRunningJobs();
}

void ClusterState::buildNodes() {
  const std::size_t count = snapshot_.nodes.size();
  free_.resize(count);
  schedulable_.resize(count);
  usable_.resize(count);
  for (std::size_t n = 0; n < count; ++n) {
    const Node& node = snapshot_.nodes[n];
    Amount a = toAmount(node.allocatable);
    a -= toAmount(node.foreignUsed);
    schedulable_[n] = a;
    free_[n].amount = a;
    usable_[n] = node.state == NodeState::kUp && toleratesAll(node.taints, {}) ? 1 : 0;
    clusterCpuMillis_ += node.allocatable.cpuMillis;
  }
}

bool ClusterState::isUp(NodeIndex n) const { return snapshot_.nodes[n].state == NodeState::kUp; }

void ClusterState::buildPartitions() {
  const std::size_t count = snapshot_.nodes.size();
  const std::size_t words = (count + 63) / 64;
  partitions_.resize(snapshot_.partitions.size());
  std::vector<std::uint32_t> perNode(count + 1, 0);
  for (std::size_t p = 0; p < snapshot_.partitions.size(); ++p) {
    partitionByName_.emplace(snapshot_.partitions[p].name, static_cast<std::uint32_t>(p));
    PartitionInfo& info = partitions_[p];
    info.member.assign(words, 0);
    for (NodeIndex n : snapshot_.partitions[p].nodes) {
      if (n >= count || info.contains(n)) continue;
      info.member[n >> 6] |= std::uint64_t{1} << (n & 63);
      info.nodes.push_back(n);
      info.totalGpus += snapshot_.nodes[n].allocatable.gpus;
      ++perNode[n + 1];
    }
    std::sort(info.nodes.begin(), info.nodes.end());
  }
  for (std::size_t n = 0; n < count; ++n) perNode[n + 1] += perNode[n];
  nodePartStart_ = perNode;
  nodePartList_.resize(perNode[count]);
  for (std::size_t p = 0; p < partitions_.size(); ++p) {
    for (NodeIndex n : partitions_[p].nodes) {
      nodePartList_[perNode[n]++] = static_cast<std::uint32_t>(p);
    }
  }
}

void ClusterState::buildPartitionLeaves() {
  const std::uint32_t leaves = topology_.leafCount();
  partLeafStart_.assign(partitions_.size() * leaves + 1, 0);
  for (std::size_t p = 0; p < partitions_.size(); ++p) {
    for (NodeIndex n : partitions_[p].nodes) ++partLeafStart_[p * leaves + topology_.leafOf(n) + 1];
  }
  for (std::size_t i = 1; i < partLeafStart_.size(); ++i)
    partLeafStart_[i] += partLeafStart_[i - 1];
  partLeafList_.resize(partLeafStart_.back());
  std::vector<std::uint32_t> cursor(partLeafStart_.begin(), partLeafStart_.end() - 1);
  for (std::size_t p = 0; p < partitions_.size(); ++p) {
    for (NodeIndex n : partitions_[p].nodes) {
      partLeafList_[cursor[p * leaves + topology_.leafOf(n)]++] = n;
    }
  }
}

// Running jobs hold their nodes until startTime + timeLimit (the backfill profile's end times).
// A job past its limit is still there until it is killed: it is taken to end just after now.
void ClusterState::holdRunningJobs() {
  const auto& jobs = snapshot_.jobs;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const Job& job = jobs[j];
    if (job.phase != JobPhase::kRunning) continue;
    const NodeRequest request{toAmount(job.perNodeAllocation()), job.holdsWholeNodes()};
    const Time end = job.timeLimit >= kUnlimited
                         ? kUnlimited
                         : std::max(job.startTime + job.timeLimit, now_ + 1);
    for (NodeIndex n : job.allocatedNodes) {
      if (n >= free_.size()) continue;
      const Amount taken = takenBy(n, request);
      free_[n].amount -= taken;
      ++free_[n].jobs;
      releases_.push_back({n, end, taken, static_cast<std::uint32_t>(j)});
    }
  }
}

void ClusterState::allocate(NodeIndex n, const NodeRequest& request) {
  free_[n].amount -= takenBy(n, request);
  ++free_[n].jobs;
}

std::optional<NodeIndex> ClusterState::nodeIndex(std::string_view name) const {
  auto it = names_.find(name);
  if (it == names_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::uint32_t> ClusterState::partitionIndex(std::string_view name) const {
  auto it = partitionByName_.find(name);
  if (it == partitionByName_.end()) return std::nullopt;
  return it->second;
}

std::span<const std::uint32_t> ClusterState::partitionsOf(NodeIndex n) const {
  return {nodePartList_.data() + nodePartStart_[n], nodePartStart_[n + 1] - nodePartStart_[n]};
}

std::span<const NodeIndex> ClusterState::partitionLeafNodes(std::uint32_t p,
                                                            std::uint32_t leaf) const {
  const std::size_t i = static_cast<std::size_t>(p) * topology_.leafCount() + leaf;
  return {partLeafList_.data() + partLeafStart_[i], partLeafStart_[i + 1] - partLeafStart_[i]};
}

}  // namespace kubeslurm::core
