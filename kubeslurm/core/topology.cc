#include "kubeslurm/core/topology.h"

#include <algorithm>
#include <bit>
#include <string>
#include <unordered_set>

namespace kubeslurm::core {

namespace {
constexpr std::uint32_t kUnset = std::numeric_limits<std::uint32_t>::max();
// Slurm's block_levels: 16 bits; the default sets bits 0-4.
constexpr std::uint32_t kDefaultBlockLevels = 5;
constexpr std::uint32_t kMaxBlockMultiple = std::uint32_t{1} << 15;
}  // namespace

Topology Topology::flat(std::size_t nodeCount) {
  Topology t;
  t.level_ = {0};
  t.parent_ = {0};
  t.switchLeaf_ = {0};
  t.leafSwitch_ = {0};
  t.nodeLeaf_.assign(nodeCount, 0);
  t.finish(nodeCount);
  return t;
}

Topology Topology::fromConf(const slurm::TopologyConf& conf, std::size_t nodeCount,
                            const NodeNameIndex& names) {
  if (conf.switches.empty()) {
    return conf.blocks.empty() ? flat(nodeCount) : fromBlocks(conf, nodeCount, names);
  }
  Topology t;
  const auto switches = static_cast<std::uint32_t>(conf.switches.size());
  std::unordered_map<std::string_view, std::uint32_t> switchByName;
  for (std::uint32_t s = 0; s < switches; ++s) switchByName.emplace(conf.switches[s].name, s);

  t.parent_.assign(switches, kUnset);
  t.nodeLeaf_.assign(nodeCount, kNoLeaf);
  t.switchLeaf_.assign(switches, kNoLeaf);
  std::vector<std::vector<std::uint32_t>> children(switches);
  for (std::uint32_t s = 0; s < switches; ++s) {
    const slurm::TopologySwitch& sw = conf.switches[s];
    if (!sw.nodes.empty()) {
      // A switch with nodes is a leaf (level 0), whatever else it lists.
      t.switchLeaf_[s] = static_cast<std::uint32_t>(t.leafSwitch_.size());
      t.leafSwitch_.push_back(s);
      for (const std::string& name : sw.nodes) {
        auto it = names.find(name);
        // A node listed under two leaves stays with the first (Slurm warns about it too).
        if (it != names.end() && t.nodeLeaf_[it->second] == kNoLeaf) {
          t.nodeLeaf_[it->second] = t.switchLeaf_[s];
        }
      }
      continue;
    }
    for (const std::string& child : sw.children) {
      auto it = switchByName.find(child);
      if (it == switchByName.end() || it->second == s) continue;
      children[s].push_back(it->second);
      if (t.parent_[it->second] == kUnset) t.parent_[it->second] = s;
    }
  }
  // Unlisted nodes: one island leaf of their own.
  t.addIslandLeaf(children);
  for (std::uint32_t s = 0; s < t.parent_.size(); ++s) {
    if (t.parent_[s] == kUnset) t.parent_[s] = s;
  }
  t.computeLevels(children);
  t.finish(nodeCount);
  return t;
}

void Topology::addIslandLeaf(std::vector<std::vector<std::uint32_t>>& children) {
  if (std::none_of(nodeLeaf_.begin(), nodeLeaf_.end(),
                   [](std::uint32_t leaf) { return leaf == kNoLeaf; })) {
    return;
  }
  const auto island = static_cast<std::uint32_t>(parent_.size());
  parent_.push_back(island);
  switchLeaf_.push_back(static_cast<std::uint32_t>(leafSwitch_.size()));
  leafSwitch_.push_back(island);
  children.emplace_back();
  for (std::uint32_t& leaf : nodeLeaf_) {
    if (leaf == kNoLeaf) leaf = switchLeaf_[island];
  }
}

Topology Topology::fromBlocks(const slurm::TopologyConf& conf, std::size_t nodeCount,
                              const NodeNameIndex& names) {
  Topology t;
  t.block_ = true;
  const auto blocks = static_cast<std::uint32_t>(conf.blocks.size());
  t.blockCount_ = blocks;
  const std::uint32_t root = blocks;
  t.nodeLeaf_.assign(nodeCount, kNoLeaf);
  std::vector<std::vector<std::uint32_t>> children(blocks + 1);
  for (std::uint32_t b = 0; b < blocks; ++b) {
    t.parent_.push_back(root);
    t.switchLeaf_.push_back(b);
    t.leafSwitch_.push_back(b);
    children[root].push_back(b);
    for (const std::string& name : conf.blocks[b].nodes) {
      auto it = names.find(name);
      // A node listed in two blocks stays with the first.
      if (it != names.end() && t.nodeLeaf_[it->second] == kNoLeaf) t.nodeLeaf_[it->second] = b;
    }
  }
  t.parent_.push_back(root);
  t.switchLeaf_.push_back(kNoLeaf);
  t.addIslandLeaf(children);
  t.computeLevels(children);
  t.finish(nodeCount);

  // The base block size: the first BlockSizes value (the parser makes it the smallest), else the
  // first block's node count, as Slurm's bblock_node_cnt (slurm-24-11-7-1
  // src/plugins/topology/block/block_record.c, _read_topo_file and _validate_blocks).
  if (!conf.blockSizes.empty()) {
    t.baseBlockNodes_ = conf.blockSizes.front();
  } else if (blocks > 0) {
    const std::unordered_set<std::string_view> distinct(conf.blocks.front().nodes.begin(),
                                                        conf.blocks.front().nodes.end());
    t.baseBlockNodes_ = static_cast<std::uint32_t>(distinct.size());
  }
  // Levels in base blocks, as Slurm's block_levels bitmap (same functions): without BlockSizes,
  // bits 0-4, i.e. 1, 2, 4, 8 and 16 base blocks whatever the block count; with BlockSizes, each
  // value over the base size, a power of two up to 2^15. A level may exceed the block count: its
  // one aggregate is then every block.
  if (blocks == 0) return t;
  if (conf.blockSizes.empty() || t.baseBlockNodes_ == 0) {
    for (std::uint32_t level = 0; level < kDefaultBlockLevels; ++level) {
      t.blockLevels_.push_back(std::uint32_t{1} << level);
    }
    return t;
  }
  t.blockLevels_.push_back(1);  // the first value is the base block itself
  for (std::uint32_t size : conf.blockSizes) {
    if (size % t.baseBlockNodes_ != 0) continue;
    const std::uint32_t m = size / t.baseBlockNodes_;
    if (!std::has_single_bit(m) || m > kMaxBlockMultiple) continue;
    t.blockLevels_.push_back(m);
  }
  std::sort(t.blockLevels_.begin(), t.blockLevels_.end());
  t.blockLevels_.erase(std::unique(t.blockLevels_.begin(), t.blockLevels_.end()),
                       t.blockLevels_.end());
  return t;
}

// Level of a switch = 0 for leaves, else 1 + the highest level among its children. Computed
// bottom-up by repeated relaxation; a cycle (rejected by the parser) cannot loop forever because
// each pass is bounded by the switch count.
void Topology::computeLevels(const std::vector<std::vector<std::uint32_t>>& children) {
  const std::size_t n = parent_.size();
  level_.assign(n, 0);
  for (std::size_t pass = 0; pass < n; ++pass) {
    bool changed = false;
    for (std::size_t s = 0; s < n; ++s) {
      for (std::uint32_t c : children[s]) {
        if (level_[c] + 1 > level_[s]) {
          level_[s] = level_[c] + 1;
          changed = true;
        }
      }
    }
    if (!changed) break;
  }
}

void Topology::finish(std::size_t nodeCount) {
  const std::size_t n = parent_.size();
  depth_.assign(n, 0);
  for (std::size_t s = 0; s < n; ++s) {
    auto cur = static_cast<std::uint32_t>(s);
    std::uint32_t hops = 0;
    while (parent_[cur] != cur && hops <= n) {
      cur = parent_[cur];
      ++hops;
    }
    depth_[s] = hops;
  }
  // Dense root numbering, in switch order.
  std::vector<std::uint32_t> rootIndex(n, kUnset);
  leafRoot_.assign(leafSwitch_.size(), 0);
  for (std::size_t leaf = 0; leaf < leafSwitch_.size(); ++leaf) {
    std::uint32_t cur = leafSwitch_[leaf];
    for (std::uint32_t hops = 0; parent_[cur] != cur && hops <= n; ++hops) cur = parent_[cur];
    if (rootIndex[cur] == kUnset) rootIndex[cur] = rootCount_++;
    leafRoot_[leaf] = rootIndex[cur];
  }
  // Nodes grouped by leaf (counting sort keeps them ascending within a leaf).
  leafStart_.assign(leafSwitch_.size() + 1, 0);
  for (std::size_t node = 0; node < nodeCount; ++node) ++leafStart_[nodeLeaf_[node] + 1];
  for (std::size_t leaf = 0; leaf < leafSwitch_.size(); ++leaf) {
    leafStart_[leaf + 1] += leafStart_[leaf];
  }
  leafNodeList_.resize(nodeCount);
  std::vector<std::uint32_t> cursor(leafStart_.begin(), leafStart_.end() - 1);
  for (std::size_t node = 0; node < nodeCount; ++node) {
    leafNodeList_[cursor[nodeLeaf_[node]]++] = static_cast<NodeIndex>(node);
  }
  computeLeafDistances();
}

// Hops between two leaves in a tree: up from each to their lowest common ancestor.
void Topology::computeLeafDistances() {
  const std::uint32_t leaves = leafCount();
  leafDistance_.assign(static_cast<std::size_t>(leaves) * leaves, kInfiniteDistance);
  for (std::uint32_t a = 0; a < leaves; ++a) {
    for (std::uint32_t b = 0; b < leaves; ++b) {
      std::uint32_t x = leafSwitch_[a];
      std::uint32_t y = leafSwitch_[b];
      std::uint32_t hops = 0;
      while (x != y) {
        if (depth_[x] >= depth_[y] && parent_[x] != x) {
          x = parent_[x];
        } else if (parent_[y] != y) {
          y = parent_[y];
        } else {
          break;  // both at their roots, and different roots
        }
        ++hops;
      }
      if (x == y) leafDistance_[static_cast<std::size_t>(a) * leaves + b] = hops;
    }
  }
}

std::span<const NodeIndex> Topology::leafNodes(std::uint32_t leaf) const {
  return {leafNodeList_.data() + leafStart_[leaf], leafStart_[leaf + 1] - leafStart_[leaf]};
}

bool Topology::isAncestorOrSelf(std::uint32_t ancestor, std::uint32_t sw) const {
  for (std::uint32_t hops = 0; hops <= switchCount(); ++hops) {
    if (sw == ancestor) return true;
    if (parent_[sw] == sw) return false;
    sw = parent_[sw];
  }
  return false;
}

slurm::TopologyConf topologyFromLabels(std::span<const Node> nodes,
                                       std::span<const std::string> levelKeys) {
  slurm::TopologyConf conf;
  const std::size_t levels = levelKeys.size();
  std::vector<std::vector<slurm::TopologySwitch>> byLevel(levels);
  std::vector<std::unordered_map<std::string, std::uint32_t>> index(levels);
  std::vector<std::vector<std::uint32_t>> parentOf(levels);  // per level, per switch
  for (const Node& node : nodes) {
    std::uint32_t below = kUnset;  // this node's switch one level down
    for (std::size_t l = 0; l < levels; ++l) {
      auto label = node.labels.find(levelKeys[l]);
      if (label == node.labels.end() || label->second.empty()) break;
      std::string name = std::to_string(l) + ":" + label->second;
      auto found = index[l].find(name);
      if (l > 0 && parentOf[l - 1][below] != kUnset) {
        // The first node of a switch decides its parent; a disagreeing node adds nothing above.
        if (found == index[l].end() || found->second != parentOf[l - 1][below]) break;
        below = found->second;
        continue;
      }
      std::uint32_t sw = 0;
      if (found == index[l].end()) {
        sw = static_cast<std::uint32_t>(byLevel[l].size());
        index[l].emplace(name, sw);
        byLevel[l].push_back({std::move(name), {}, {}, 1});
        parentOf[l].push_back(kUnset);
      } else {
        sw = found->second;
      }
      if (l == 0) {
        byLevel[l][sw].nodes.push_back(node.name);
      } else {
        parentOf[l - 1][below] = sw;
        byLevel[l][sw].children.push_back(byLevel[l - 1][below].name);
      }
      below = sw;
    }
  }
  for (std::vector<slurm::TopologySwitch>& level : byLevel) {
    for (slurm::TopologySwitch& sw : level) conf.switches.push_back(std::move(sw));
  }
  return conf;
}

}  // namespace kubeslurm::core
