#include "kubeslurm/core/placement.h"

#include <bit>
#include <functional>
#include <limits>
#include <numeric>

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

// The usable nodes of base blocks [first, last) in their `maxGroups` fullest groups of
// 2^groupShift base blocks: Slurm's avail_bnc (eval_nodes_block sorts nodes_on_llblock and sums
// the first max_llblock).
std::int64_t LeafChooser::topGroupsSum(std::uint32_t first, std::uint32_t last,
                                       std::uint32_t groupShift, std::int64_t maxGroups) {
  groupScratch_.clear();
  for (std::uint32_t b = first; b < last; ++b) {
    if (b == first || (b >> groupShift) != ((b - 1) >> groupShift)) groupScratch_.push_back(0);
    groupScratch_.back() += count_[b];
  }
  const auto k = static_cast<std::size_t>(
      std::min<std::int64_t>(maxGroups, static_cast<std::int64_t>(groupScratch_.size())));
  const auto kth = groupScratch_.begin() + static_cast<std::ptrdiff_t>(k);
  std::nth_element(groupScratch_.begin(), kth, groupScratch_.end(), std::greater<>());
  return std::accumulate(groupScratch_.begin(), kth, std::int64_t{0});
}

namespace {
// ceil(log2(x)), 0 for x <= 1.
std::uint32_t ceilLog2(std::uint64_t x) {
  return x <= 1 ? 0 : static_cast<std::uint32_t>(std::bit_width(x - 1));
}
}  // namespace

// topology/block: steps 1-4 of placement.h, after slurm-24-11-7-1
// src/plugins/topology/block/eval_nodes_block.c (eval_nodes_block, _choose_best_bblock).
// count_ holds each base block's usable nodes, required ones excluded.
bool LeafChooser::chooseBlocks(std::span<const std::uint32_t> leafAvail, std::uint32_t nodes,
                               std::uint32_t requiredNodes,
                               std::span<const std::uint32_t> requiredLeaves,
                               std::vector<LeafTake>& out) {
  const std::uint32_t blocks = topology_.blockCount();
  if (blocks == 0 || topology_.blockLevels().empty()) return false;
  // Required nodes outside every block: "requires nodes which are not in blocks".
  if (std::any_of(requiredLeaves.begin(), requiredLeaves.end(),
                  [&](std::uint32_t leaf) { return leaf >= blocks; })) {
    return false;
  }
  const std::uint64_t size = std::uint64_t{nodes} + requiredNodes;
  if (size == 0) return true;

  // 1 and 2: the level (aggregate of `aggregate` base blocks) and the spread limit (at most
  // maxGroups groups of 2^groupShift base blocks), from the job's size alone.
  const std::uint64_t base = std::max<std::uint32_t>(topology_.baseBlockNodes(), 1);
  const std::uint32_t needLevel = ceilLog2((size + base - 1) / base);
  std::uint32_t groupShift = 0;
  std::uint64_t aggregate = 0;
  for (std::uint32_t m : topology_.blockLevels()) {
    const auto level = static_cast<std::uint32_t>(std::countr_zero(m));
    if (level < needLevel) {
      groupShift = level;
    } else if (aggregate == 0) {
      aggregate = m;
    }
  }
  if (aggregate == 0) aggregate = blocks;  // larger than the largest block: every block
  const std::uint64_t groupNodes = (std::uint64_t{1} << groupShift) * base;
  const auto maxGroups = static_cast<std::int64_t>((size + groupNodes - 1) / groupNodes);
  const bool limited =
      aggregate != (std::uint64_t{1} << groupShift) * static_cast<std::uint64_t>(maxGroups);

  count_.assign(leafAvail.begin(), leafAvail.begin() + blocks);
  blockUsed_.assign(blocks, 0);
  const std::uint32_t groups = ((blocks - 1) >> groupShift) + 1;
  groupCount_.assign(groups, 0);
  groupUsed_.assign(groups, 0);
  auto aggregateEnd = [&](std::uint64_t first) {
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(first + aggregate, blocks));
  };

  // 3: the aggregate.
  std::uint32_t first = 0;
  if (!requiredLeaves.empty()) {
    const std::uint32_t lowest = *std::min_element(requiredLeaves.begin(), requiredLeaves.end());
    first = static_cast<std::uint32_t>(lowest / aggregate * aggregate);
    const std::uint32_t last = aggregateEnd(first);
    if (std::any_of(requiredLeaves.begin(), requiredLeaves.end(),
                    [&](std::uint32_t leaf) { return leaf >= last; })) {
      return false;  // "requires nodes that do not have shared block"
    }
  } else {
    std::int64_t best = -1;
    std::int64_t bestSum = 0;
    for (std::uint64_t f = 0; f < blocks; f += aggregate) {
      const auto from = static_cast<std::uint32_t>(f);
      const std::uint32_t to = aggregateEnd(f);
      const std::int64_t sum = blockSum(from, to);
      const std::int64_t usable = limited ? topGroupsSum(from, to, groupShift, maxGroups) : sum;
      if (usable < static_cast<std::int64_t>(size)) continue;
      if (best < 0 || sum <= bestSum) {  // the fewest usable nodes, the last on a tie
        best = from;
        bestSum = sum;
      }
    }
    if (best < 0) return false;
    first = static_cast<std::uint32_t>(best);
  }
  const std::uint32_t last = aggregateEnd(first);

  // 4: required nodes' base blocks (each new group of them counts against the limit), then the
  // rest of their nodes, in block order.
  std::int64_t groupsLeft = maxGroups;
  for (std::uint32_t leaf : requiredLeaves) blockUsed_[leaf] = 1;
  std::uint32_t lastGroup = std::numeric_limits<std::uint32_t>::max();
  for (std::uint32_t b = first; b < last; ++b) {
    if (blockUsed_[b] == 0) continue;
    groupUsed_[b >> groupShift] = 1;
    if (limited && (b >> groupShift) != lastGroup) {
      --groupsLeft;
      lastGroup = b >> groupShift;
    }
  }
  if (groupsLeft < 0) return false;
  std::int64_t remaining = nodes;
  for (std::uint32_t b = first; b < last && remaining > 0; ++b) {
    if (blockUsed_[b] == 0) continue;
    const std::int64_t take = std::min(count_[b], remaining);
    if (take > 0) out.push_back({b, static_cast<std::uint32_t>(take)});
    remaining -= take;
  }
  if (remaining == 0) return true;

  // Then base blocks one at a time (_choose_best_bblock). Group counts are taken once, before.
  for (std::uint32_t b = first; b < last; ++b) {
    if (blockUsed_[b] == 0) groupCount_[b >> groupShift] += count_[b];
  }
  while (true) {
    std::int64_t best = -1;
    bool bestFit = false;
    bool bestSame = true;  // stays true without the spread limit
    for (std::uint32_t b = first; b < last; ++b) {
      if (blockUsed_[b] != 0) continue;
      const bool fit = count_[b] >= remaining;
      const std::uint32_t g = b >> groupShift;
      const auto bestGroup = static_cast<std::uint32_t>(best) >> groupShift;
      if (limited && (best < 0 || g != bestGroup)) {
        const bool same = groupUsed_[g] != 0;
        bool take = best < 0 || (same && !bestSame);
        bool decided = take || (!same && bestSame);
        if (!decided) {
          const bool groupFit = groupCount_[g] >= remaining;
          const bool bestGroupFit = groupCount_[bestGroup] >= remaining;
          if (groupFit != bestGroupFit) {
            take = groupFit;
            decided = true;
          } else if (groupCount_[g] != groupCount_[bestGroup]) {
            take = groupFit ? groupCount_[g] < groupCount_[bestGroup]
                            : groupCount_[g] > groupCount_[bestGroup];
            decided = true;
          }
        }
        if (take) {
          best = b;
          bestFit = fit;
          bestSame = same;
        }
        if (decided) continue;
      }
      const std::int64_t held = best < 0 ? 0 : count_[static_cast<std::size_t>(best)];
      if (best < 0 || (fit && (!bestFit || count_[b] <= held)) ||
          (!fit && !bestFit && count_[b] >= held)) {
        best = b;
        bestFit = fit;
      }
    }
    if (best < 0 || (groupsLeft <= 0 && !bestSame)) return false;
    const auto leaf = static_cast<std::uint32_t>(best);
    blockUsed_[leaf] = 1;
    groupUsed_[leaf >> groupShift] = 1;
    const std::int64_t take = std::min(count_[leaf], remaining);
    if (take > 0) out.push_back({leaf, static_cast<std::uint32_t>(take)});
    remaining -= take;
    if (!bestSame) --groupsLeft;
    if (remaining == 0) return true;
    if (take == 0) return false;  // stalled
  }
}

std::uint32_t targetNodes(const JobView& job, std::uint64_t usable) {
  if (job.maxNodes <= job.minNodes) return job.minNodes;
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(usable, job.minNodes, job.maxNodes));
}

bool placeContiguous(const JobView& job, PlacementScratch& s, std::vector<NodeIndex>& out) {
  // Every usable node, ascending: the required ones (in `out`) merged into the fitting ones.
  s.candidates.clear();
  s.candidates.reserve(out.size() + s.fitting.size());
  std::size_t r = 0;
  for (const PackKey& k : s.fitting) {
    for (; r < out.size() && out[r] < k.node; ++r) s.candidates.push_back({{}, out[r]});
    s.candidates.push_back(k);
  }
  for (; r < out.size(); ++r) s.candidates.push_back({{}, out[r]});
  const std::vector<PackKey>& usable = s.candidates;
  const auto runEnd = [&usable](std::size_t first) {
    std::size_t last = first;
    while (last + 1 < usable.size() && usable[last + 1].node == usable[last].node + 1) ++last;
    return last + 1;
  };
  const bool withRequired = !out.empty();
  // The chosen run [first, end) of `usable`, and where in it the job's window starts.
  std::size_t first = 0;
  std::size_t end = 0;
  std::size_t windowStart = 0;
  std::uint32_t size = 0;
  if (withRequired) {
    const NodeIndex firstRequired = out.front();
    const NodeIndex lastRequired = out.back();
    bool found = false;
    for (std::size_t i = 0, e = 0; i < usable.size() && !found; i = e) {
      e = runEnd(i);
      if (usable[i].node <= firstRequired && firstRequired <= usable[e - 1].node) {
        if (lastRequired > usable[e - 1].node) return false;  // the required nodes are apart
        first = i;
        end = e;
        found = true;
      }
    }
    if (!found) return false;
    const auto span = static_cast<std::uint32_t>(lastRequired - firstRequired + 1);
    const auto length = static_cast<std::uint32_t>(end - first);
    size = std::max(targetNodes(job, length), span);
    if (size > job.maxNodes || size > length) return false;
    // Upward from the first required node, then downward where the run ends.
    const std::size_t at = first + (firstRequired - usable[first].node);
    windowStart = std::min(at, end - size);
  } else {
    bool found = false;
    std::int64_t bestCpu = 0;
    for (std::size_t i = 0, e = 0; i < usable.size(); i = e) {
      e = runEnd(i);
      if (e - i < job.minNodes) continue;
      std::int64_t cpu = 0;
      for (std::size_t k = i; k < e; ++k) cpu += usable[k].free.cpuMillis;
      if (!found || cpu < bestCpu) {
        found = true;
        bestCpu = cpu;
        first = i;
        end = e;
      }
    }
    if (!found) return false;
    size = targetNodes(job, end - first);
    windowStart = first;
  }
  out.clear();
  for (std::size_t k = windowStart; k < windowStart + size; ++k) out.push_back(usable[k].node);
  return true;
}

void sortRankOrder(const Topology& topology, std::vector<NodeIndex>& nodes) {
  if (topology.isBlock()) {
    std::sort(nodes.begin(), nodes.end());
    return;
  }
  std::sort(nodes.begin(), nodes.end(), [&](NodeIndex a, NodeIndex b) {
    const std::uint32_t la = topology.leafOf(a);
    const std::uint32_t lb = topology.leafOf(b);
    return la != lb ? la < lb : a < b;
  });
}

bool withinSwitchLimit(const Topology& topology, const JobView& job, const PlacementScratch& s) {
  // topology/block does not enforce --switches: only eval_nodes_tree.c reads req_switch
  // (slurm-24-11-7-1).
  if (!job.maxSwitches || topology.isBlock()) return true;
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
  if (targetNodes(job, usable) == 1 && !state_.topology().isBlock()) {
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
    const std::uint32_t ca = leafRankKey(scratch_.leafAvail, a);
    const std::uint32_t cb = leafRankKey(scratch_.leafAvail, b);
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
