// The switch tree of topology/tree, resolved to node and switch indices once per cycle.
//
// Slurm's model (doc/html/topology.shtml, src/plugins/topology/tree): switches that list Nodes=
// are leaves (level 0); a switch that lists Switches= sits one level above the highest of its
// children; a switch's parent is the switch that lists it; a root is its own parent. Distances
// between switches are hop counts along the tree, and "infinite" between separate trees.
//
// Two cases Slurm does not have, decided here:
//  - No topology at all: one synthetic leaf holds every node (a flat cluster is one switch).
//  - Nodes that topology.conf does not list: they form one extra synthetic leaf that is its own
//    root, an island that jobs can use but never span with the tree (Slurm would not use them).
//
// Block topology (topology/block, Slurm 23.11+, BlockSizes= 24.05+; checked against
// slurm-24-11-7-1 src/plugins/topology/block/{block_record.c,eval_nodes_block.c}): each
// BlockName= is a base block and becomes a leaf, in file order (Slurm's block index); one
// synthetic root joins them. Unlisted nodes form the island leaf as above, which the block
// chooser never uses: Slurm allocates only nodes of the chosen block (eval_nodes_block). The
// block levels (BlockSizes=, in base blocks) are kept for the block chooser (placement.h); the
// tree chooser is not used for blocks.
//
// Topology from node labels: topologyFromLabels() writes the switch records that a topology.conf
// would hold, so labels and topology.conf give the same tree.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kubeslurm/core/model.h"

namespace kubeslurm::core {

inline constexpr std::uint32_t kInfiniteDistance = std::numeric_limits<std::uint32_t>::max();
inline constexpr std::uint32_t kNoLeaf = std::numeric_limits<std::uint32_t>::max();

using NodeNameIndex = std::unordered_map<std::string_view, NodeIndex>;

class Topology {
 public:
  // A flat cluster: one leaf with every node.
  static Topology flat(std::size_t nodeCount);
  // The tree of `conf`, with node names resolved through `names`. Unknown names are ignored.
  static Topology fromConf(const slurm::TopologyConf& conf, std::size_t nodeCount,
                           const NodeNameIndex& names);
  // The base blocks of `conf` (no switches, some blocks) as leaves under one root.
  static Topology fromBlocks(const slurm::TopologyConf& conf, std::size_t nodeCount,
                             const NodeNameIndex& names);

  // Block topology: leaves [0, blockCount()) are the base blocks in file order; a leaf at or past
  // blockCount() is the island of unlisted nodes.
  bool isBlock() const { return block_; }
  std::uint32_t blockCount() const { return blockCount_; }
  // The block levels, in base blocks per block: ascending powers of two, 1 first; 1-16 when
  // BlockSizes is unset (Slurm's default block_levels), and possibly above blockCount().
  std::span<const std::uint32_t> blockLevels() const { return blockLevels_; }
  // Nodes per base block (the first BlockSizes value, else the first block's node count).
  std::uint32_t baseBlockNodes() const { return baseBlockNodes_; }

  std::uint32_t switchCount() const { return static_cast<std::uint32_t>(level_.size()); }
  std::uint32_t leafCount() const { return static_cast<std::uint32_t>(leafSwitch_.size()); }
  std::uint32_t level(std::uint32_t sw) const { return level_[sw]; }
  std::uint32_t parent(std::uint32_t sw) const { return parent_[sw]; }
  std::uint32_t leafSwitch(std::uint32_t leaf) const { return leafSwitch_[leaf]; }
  // The switch's leaf index, or kNoLeaf for an upper switch.
  std::uint32_t leafIndexOfSwitch(std::uint32_t sw) const { return switchLeaf_[sw]; }
  // The leaf that holds the node (every node has exactly one).
  std::uint32_t leafOf(NodeIndex node) const { return nodeLeaf_[node]; }
  std::span<const NodeIndex> leafNodes(std::uint32_t leaf) const;
  // Hops between two leaves through their lowest common switch; kInfiniteDistance when apart.
  std::uint32_t leafDistance(std::uint32_t a, std::uint32_t b) const {
    return leafDistance_[static_cast<std::size_t>(a) * leafCount() + b];
  }
  std::uint32_t rootOfLeaf(std::uint32_t leaf) const { return leafRoot_[leaf]; }
  std::uint32_t rootCount() const { return rootCount_; }
  bool isAncestorOrSelf(std::uint32_t ancestor, std::uint32_t sw) const;

 private:
  void finish(std::size_t nodeCount);
  // Nodes no switch or block lists form one leaf of their own, its own root: jobs may use them
  // but never span into them.
  void addIslandLeaf(std::vector<std::vector<std::uint32_t>>& children);
  void computeLevels(const std::vector<std::vector<std::uint32_t>>& children);
  void computeLeafDistances();

  std::vector<std::uint32_t> level_;       // per switch
  std::vector<std::uint32_t> parent_;      // per switch; a root is its own parent
  std::vector<std::uint32_t> depth_;       // per switch: hops to its root
  std::vector<std::uint32_t> switchLeaf_;  // per switch: leaf index or kNoLeaf
  std::vector<std::uint32_t> leafSwitch_;  // per leaf: its switch
  std::vector<std::uint32_t> leafRoot_;    // per leaf: the dense index of its root
  std::vector<std::uint32_t> leafStart_;   // per leaf + 1: offsets into leafNodeList_
  std::vector<NodeIndex> leafNodeList_;    // nodes grouped by leaf, ascending within a leaf
  std::vector<std::uint32_t> nodeLeaf_;    // per node
  std::vector<std::uint32_t> leafDistance_;
  std::uint32_t rootCount_ = 0;
  bool block_ = false;
  std::uint32_t blockCount_ = 0;
  std::vector<std::uint32_t> blockLevels_;
  std::uint32_t baseBlockNodes_ = 0;
};

// The switch records of a tree built from node labels: `levelKeys` name the levels from the leaf
// upward; a node's value for a key is the name of its switch at that level. Leaves come in the
// order their first node appears, each upper level after the one below it. A node without the
// leaf label is under no switch (the island); a switch's parent is the value its first node has
// for the next key, and a chain stops at the first missing label (that switch is a root).
// Switch names are made unique per level ("<level>:<value>"), as values may repeat across levels.
slurm::TopologyConf topologyFromLabels(std::span<const Node> nodes,
                                       std::span<const std::string> levelKeys);

}  // namespace kubeslurm::core
