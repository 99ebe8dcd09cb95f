#include "operator/core/placement.h"

#include <limits>

namespace kubeslurm::core {

namespace {
constexpr std::uint64_t kFar = std::numeric_limits<std::uint64_t>::max();
}  // namespace

LeafChooser::LeafChooser(const Topology& topology) : topology_(topology) {}

// Slurm's _topo_compare_switches, in its own words: > 0 when switch `a` suits `remaining` nodes
// better than `b`. Fit beats no fit; two fits: the tighter one; two misfits: compare their
// parents (while they differ), and at the end the larger one, then the lower level.
int LeafChooser::compare(std::uint32_t a, std::uint32_t b, std::int64_t remaining) const {
  for (std::uint32_t hops = 0; hops <= topology_.switchCount(); ++hops) {
    const bool aFits = count_[a] >= remaining;
    const bool bFits = count_[b] >= remaining;
    if (aFits && bFits) {
      if (count_[a] != count_[b]) return count_[a] < count_[b] ? 1 : -1;
      break;
    }
    if (aFits != bFits) return aFits ? 1 : -1;
    const std::uint32_t pa = topology_.parent(a);
    const std::uint32_t pb = topology_.parent(b);
    if ((pa == a && pb == b) || pa == pb) break;
    a = pa;
    b = pb;
  }
  if (count_[a] != count_[b]) return count_[a] > count_[b] ? 1 : -1;
  if (topology_.level(a) != topology_.level(b)) {
    return topology_.level(a) < topology_.level(b) ? 1 : -1;
  }
  return 0;
}

// Slurm's _topo_choose_best_switch: the first usable leaf seeds the choice; a later one replaces
// it when it is closer to the leaves already picked and at least as good, or as close and better.
void LeafChooser::consider(std::uint32_t leaf, std::int64_t remaining, std::int64_t& best) const {
  const std::uint32_t sw = topology_.leafSwitch(leaf);
  const std::uint64_t d = distance_[leaf];
  if (best < 0 || d == kFar || count_[sw] == 0) {
    if (best < 0 && count_[sw] > 0 && d != kFar) best = leaf;
    return;
  }
  const auto b = static_cast<std::uint32_t>(best);
  const int better = compare(sw, topology_.leafSwitch(b), remaining);
  if ((d < distance_[b] && better >= 0) || (d == distance_[b] && better > 0)) best = leaf;
}

// The top switch: the highest-level switch with enough usable nodes (the last such in switch
// order, as Slurm's scan keeps replacing it on ties) that also holds every required node.
// Switches outside its subtree lose their nodes; those above it keep exactly its nodes.
bool LeafChooser::restrictToTop(std::uint32_t nodes,
                                std::span<const std::uint32_t> requiredLeaves) {
  std::int64_t top = -1;
  for (std::uint32_t s = 0; s < topology_.switchCount(); ++s) {
    if (count_[s] < nodes) continue;
    const bool holdsRequired =
        std::all_of(requiredLeaves.begin(), requiredLeaves.end(), [&](std::uint32_t leaf) {
          return topology_.isAncestorOrSelf(s, topology_.leafSwitch(leaf));
        });
    if (!holdsRequired) continue;
    if (top < 0 || topology_.level(s) >= topology_.level(static_cast<std::uint32_t>(top))) top = s;
  }
  if (top < 0) return false;
  const auto t = static_cast<std::uint32_t>(top);
  for (std::uint32_t s = 0; s < topology_.switchCount(); ++s) {
    if (topology_.isAncestorOrSelf(t, s)) continue;
    count_[s] = topology_.isAncestorOrSelf(s, t) ? count_[t] : 0;
  }
  return true;
}

void LeafChooser::addDistances(std::uint32_t leaf) {
  for (std::uint32_t k = 0; k < topology_.leafCount(); ++k) {
    const std::uint32_t hops = topology_.leafDistance(leaf, k);
    distance_[k] = (distance_[k] == kFar || hops == kInfiniteDistance) ? kFar : distance_[k] + hops;
  }
}

bool LeafChooser::choose(std::span<const std::uint32_t> leafAvail, std::uint32_t nodes,
                         std::span<const std::uint32_t> requiredLeaves, std::vector<LeafTake>& out,
                         std::uint32_t requiredNodes) {
  if (topology_.isBlock())
    return chooseBlocks(leafAvail, nodes, requiredNodes, requiredLeaves, out);
  count_.assign(topology_.switchCount(), 0);
  for (std::uint32_t leaf = 0; leaf < topology_.leafCount(); ++leaf) {
    std::uint32_t s = topology_.leafSwitch(leaf);
    for (std::uint32_t hops = 0; hops <= topology_.switchCount(); ++hops) {
      count_[s] += leafAvail[leaf];
      if (topology_.parent(s) == s) break;
      s = topology_.parent(s);
    }
  }
  if (!restrictToTop(nodes, requiredLeaves)) return false;
  distance_.assign(topology_.leafCount(), 0);
  std::int64_t remaining = nodes;
  for (std::uint32_t leaf : requiredLeaves) {  // Slurm fills the required nodes' leaves first
    addDistances(leaf);
    const std::uint32_t sw = topology_.leafSwitch(leaf);
    const std::int64_t take = std::min(count_[sw], remaining);
    if (take > 0) out.push_back({leaf, static_cast<std::uint32_t>(take)});
    remaining -= take;
    count_[sw] = 0;
  }
  while (remaining > 0) {
    std::int64_t best = -1;
    for (std::uint32_t leaf = 0; leaf < topology_.leafCount(); ++leaf) {
      consider(leaf, remaining, best);
    }
    if (best < 0) return false;
    const auto leaf = static_cast<std::uint32_t>(best);
    const std::uint32_t sw = topology_.leafSwitch(leaf);
    const std::int64_t take = std::min(count_[sw], remaining);
    out.push_back({leaf, static_cast<std::uint32_t>(take)});
    remaining -= take;
    addDistances(leaf);
    count_[sw] = 0;
  }
  return true;
}

std::int64_t LeafChooser::blockSum(std::uint32_t first, std::uint32_t last) const {
  std::int64_t sum = 0;
  for (std::uint32_t b = first; b < last; ++b) sum += count_[b];
  return sum;
}

// Base blocks of [first, last) one at a time: one that holds the rest beats one that does not;
// two that do, the tighter; two that do not, the fuller; then block order.
void LeafChooser::fillBlocks(std::uint32_t first, std::uint32_t last, std::int64_t& remaining,
                             std::vector<LeafTake>& out) {
  while (remaining > 0) {
    std::int64_t best = -1;
    for (std::uint32_t b = first; b < last; ++b) {
      if (count_[b] <= 0) continue;
      if (best < 0) {
        best = b;
        continue;
      }
      const std::int64_t current = count_[static_cast<std::size_t>(best)];
      const bool fits = count_[b] >= remaining;
      if (fits != (current >= remaining)) {
        if (fits) best = b;
      } else if (fits ? count_[b] < current : count_[b] > current) {
        best = b;
      }
    }
    if (best < 0) return;
    const auto leaf = static_cast<std::uint32_t>(best);
    const std::int64_t take = std::min(count_[leaf], remaining);
    out.push_back({leaf, static_cast<std::uint32_t>(take)});
    remaining -= take;
    count_[leaf] = 0;
  }
}

// topology/block: see placement.h. count_ holds each base block's usable nodes.
bool LeafChooser::chooseBlocks(std::span<const std::uint32_t> leafAvail, std::uint32_t nodes,
                               std::uint32_t requiredNodes,
                               std::span<const std::uint32_t> requiredLeaves,
                               std::vector<LeafTake>& out) {
  const std::uint32_t blocks = topology_.blockCount();
  bool requiredInIsland = false;
  bool requiredInBlocks = false;
  for (std::uint32_t leaf : requiredLeaves)
    (leaf >= blocks ? requiredInIsland : requiredInBlocks) = true;
  auto useIsland = [&] {
    if (topology_.leafCount() <= blocks || requiredInBlocks || leafAvail[blocks] < nodes) {
      return false;
    }
    out.push_back({blocks, nodes});
    return true;
  };
  if (requiredInIsland) return useIsland();
  count_.assign(leafAvail.begin(), leafAvail.begin() + blocks);
  auto holdsRequired = [&](std::uint32_t first, std::uint32_t last) {
    return std::all_of(requiredLeaves.begin(), requiredLeaves.end(),
                       [&](std::uint32_t leaf) { return leaf >= first && leaf < last; });
  };
  // Required nodes' blocks are filled first (their other nodes count as picked), as for leaves.
  auto fillRequired = [&](std::int64_t& remaining) {
    for (std::uint32_t leaf : requiredLeaves) {
      const std::int64_t take = std::min(count_[leaf], remaining);
      if (take > 0) out.push_back({leaf, static_cast<std::uint32_t>(take)});
      remaining -= take;
      count_[leaf] = 0;
    }
  };
  // The smallest level with an aggregate that holds the job; there, the best fit.
  for (std::uint32_t m : topology_.blockLevels()) {
    std::int64_t best = -1;
    std::int64_t bestSum = 0;
    for (std::uint32_t first = 0; first + m <= blocks; first += m) {
      if (!holdsRequired(first, first + m)) continue;
      const std::int64_t sum = blockSum(first, first + m);
      if (sum < nodes) continue;
      if (best < 0 || sum < bestSum) {
        best = first;
        bestSum = sum;
      }
    }
    if (best < 0) continue;
    std::int64_t remaining = nodes;
    fillRequired(remaining);
    const auto first = static_cast<std::uint32_t>(best);
    fillBlocks(first, first + m, remaining, out);
    return remaining == 0;
  }
  // Larger than the largest block: span aggregates of the largest size (the last one may be
  // short), those with required nodes first, then one that holds the rest (the tightest) before
  // one that does not (the fullest).
  const std::uint64_t largest =
      topology_.blockLevels().empty() ? 0 : topology_.blockLevels().back();
  const std::uint64_t size = std::uint64_t{nodes} + requiredNodes;
  if (largest == 0 || size <= largest * topology_.baseBlockNodes() || blockSum(0, blocks) < nodes) {
    return useIsland();
  }
  const auto step = static_cast<std::uint32_t>(largest);
  std::int64_t remaining = nodes;
  fillRequired(remaining);
  for (std::uint32_t leaf : requiredLeaves) {
    const std::uint32_t first = leaf / step * step;
    fillBlocks(first, std::min(first + step, blocks), remaining, out);
  }
  while (remaining > 0) {
    std::int64_t best = -1;
    std::int64_t bestSum = 0;
    for (std::uint32_t first = 0; first < blocks; first += step) {
      const std::int64_t sum = blockSum(first, std::min(first + step, blocks));
      if (sum <= 0) continue;
      const bool fits = sum >= remaining;
      if (best < 0 || (fits != (bestSum >= remaining) && fits) ||
          (fits == (bestSum >= remaining) && (fits ? sum < bestSum : sum > bestSum))) {
        best = first;
        bestSum = sum;
      }
    }
    if (best < 0) return false;
    const auto first = static_cast<std::uint32_t>(best);
    fillBlocks(first, std::min(first + step, blocks), remaining, out);
  }
  return true;
}

std::uint32_t targetNodes(const JobView& job, std::uint64_t usable) {
  if (job.maxNodes <= job.minNodes) return job.minNodes;
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(usable, job.minNodes, job.maxNodes));
}

void sortRankOrder(const Topology& topology, std::vector<NodeIndex>& nodes) {
  std::sort(nodes.begin(), nodes.end(), [&](NodeIndex a, NodeIndex b) {
    const std::uint32_t la = topology.leafOf(a);
    const std::uint32_t lb = topology.leafOf(b);
    return la != lb ? la < lb : a < b;
  });
}

bool withinSwitchLimit(const JobView& job, const PlacementScratch& s) {
  if (!job.maxSwitches) return true;
  std::size_t leaves = s.requiredLeaves.size();
  for (const LeafTake& t : s.takes) {
    if (std::find(s.requiredLeaves.begin(), s.requiredLeaves.end(), t.leaf) ==
        s.requiredLeaves.end()) {
      ++leaves;
    }
  }
  return leaves <= *job.maxSwitches;
}

void pickPacked(const JobView& job, std::vector<PackKey>& candidates, std::uint32_t take,
                std::vector<NodeIndex>& out) {
  if (job.request.exclusive) {
    for (PackKey& k : candidates) k.free = {};  // whole nodes: index order, as Slurm
  }
  const auto mid = candidates.begin() + static_cast<std::ptrdiff_t>(take);
  std::partial_sort(candidates.begin(), mid, candidates.end());
  for (auto it = candidates.begin(); it != mid; ++it) out.push_back(it->node);
}

Placer::Placer(ClusterState& state, CapacityIndex& index)
    : state_(state), index_(index), chooser_(state.topology()) {}

bool Placer::placeNow(const JobView& job, std::vector<NodeIndex>& out) {
  const NodeRequest& request = job.request;
  if (!job.simple) return placeWith(job, state_.freeAll(), out);
  const std::uint32_t leaves = state_.topology().leafCount();
  scratch_.leafAvail.resize(leaves);
  std::uint64_t usable = 0;
  for (std::uint32_t leaf = 0; leaf < leaves; ++leaf) {
    scratch_.leafAvail[leaf] = index_.countFits(job.partition, leaf, request);
    usable += scratch_.leafAvail[leaf];
  }
  if (targetNodes(job, usable) == 1) {
    out.clear();
    return usable > 0 && placeSingle(job, out);
  }
  auto fit = [&](NodeIndex n, Amount& free) {
    const NodeFree& f = state_.free(n);
    if (!index_.open(n) || !fits(f, request)) return false;
    free = f.amount;
    return true;
  };
  return placeJob(state_, job, chooser_, scratch_, true, fit, out);
}

// The best node of one leaf with exactly `bucket` free GPUs (any, for exclusive jobs, which go
// by index), by CPU, memory, index.
bool Placer::bestInLeaf(const JobView& job, std::uint32_t leaf, std::int64_t bucket,
                        NodeIndex& best) {
  bool found = false;
  PackKey bestKey;
  for (NodeIndex n : state_.partitionLeafNodes(job.partition, leaf)) {
    const NodeFree& f = state_.free(n);
    if (!index_.open(n) || !fits(f, job.request)) continue;
    if (!job.request.exclusive && f.amount.gpus != bucket) continue;
    const PackKey key{job.request.exclusive ? Amount{} : f.amount, n};
    if (!found || key < bestKey) {
      bestKey = key;
      found = true;
    }
  }
  best = bestKey.node;
  return found;
}

// singleRank's order without visiting every node: GPU buckets from the request up, and in each
// the leaves by (usable nodes, switch order); the first leaf holding a fitting node of the
// bucket has the answer. Nodes with kTopBucket or more free GPUs go to the exact scan.
bool Placer::placeSingle(const JobView& job, std::vector<NodeIndex>& out) {
  const std::uint32_t leaves = state_.topology().leafCount();
  leafOrder_.clear();
  for (std::uint32_t leaf = 0; leaf < leaves; ++leaf) {
    if (scratch_.leafAvail[leaf] > 0) leafOrder_.push_back(leaf);
  }
  std::sort(leafOrder_.begin(), leafOrder_.end(), [&](std::uint32_t a, std::uint32_t b) {
    const std::uint32_t ca = leafRankKey(state_.topology(), scratch_.leafAvail, a);
    const std::uint32_t cb = leafRankKey(state_.topology(), scratch_.leafAvail, b);
    return ca != cb ? ca < cb : a < b;
  });
  NodeIndex best = 0;
  if (job.request.exclusive) {
    for (std::uint32_t leaf : leafOrder_) {
      if (bestInLeaf(job, leaf, 0, best)) {
        out.push_back(best);
        return true;
      }
    }
    return false;
  }
  for (std::int64_t b = std::max<std::int64_t>(job.request.amount.gpus, 0);
       b < CapacityIndex::kTopBucket; ++b) {
    for (std::uint32_t leaf : leafOrder_) {
      if (index_.bucketCount(job.partition, leaf, b, false) == 0) continue;
      if (bestInLeaf(job, leaf, b, best)) {
        out.push_back(best);
        return true;
      }
    }
  }
  return placeWith(job, state_.freeAll(), out);
}

bool Placer::placeWith(const JobView& job, std::span<const NodeFree> free,
                       std::vector<NodeIndex>& out) {
  const PartitionInfo& partition = state_.partition(job.partition);
  auto fit = [&](NodeIndex n, Amount& amount) {
    if (index_.closed(n) || !partition.contains(n) || !nodeAllowed(state_, job, n) ||
        !fits(free[n], job.request)) {
      return false;
    }
    amount = free[n].amount;
    return true;
  };
  return placeJob(state_, job, chooser_, scratch_, false, fit, out);
}

void Placer::commit(const JobView& job, std::span<const NodeIndex> nodes) {
  for (NodeIndex n : nodes) {
    index_.remove(n);
    state_.allocate(n, job.request);
    index_.insert(n);
  }
}

}  // namespace kubeslurm::core
