// Block topology placement (topology/block, Slurm 23.11+; BlockSizes= 24.05+).
//
// The rules tested are Slurm's, read from slurm-24-11-7-1 (unchanged in 24.05-25.11 but for
// --segment, which is not modelled):
//  - src/plugins/topology/block/block_record.c, _read_topo_file: block levels are the BlockSizes
//    values over the first one (the base block size), powers of two; without BlockSizes, 1, 2, 4,
//    8 and 16 base blocks.
//  - src/plugins/topology/block/eval_nodes_block.c, eval_nodes_block: the job's node count alone
//    fixes the level (the smallest configured one of at least ceil(log2(ceil(N / base))) base
//    blocks, else every block as one); the spread limit (at most ceil(N / lower size) groups of
//    the largest lower level); aggregates aligned to their size, the last one possibly short;
//    the aggregate with the fewest usable nodes that suffice, the last on a tie; required nodes
//    fix the aggregate; only nodes of the chosen aggregate are ever used.
//  - same file, _choose_best_bblock: base blocks one at a time; a used group beats a new one,
//    then a group that holds the rest (tightest) beats one that does not (fullest); then a base
//    block that holds the rest (tightest) beats one that does not (fullest), the last on a tie.
//  - Nodes come in node-index order (the allocation is a node bitmap).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kubeslurm/core/placement.h"
#include "kubeslurm/core/topology.h"
#include "tests/unit/core/builders.h"

namespace kubeslurm::core {
namespace {

using testing::idx;
using testing::kT0;
using testing::MakeCluster;
using testing::MakeJob;
using testing::range;

// 4 * `blocks` nodes (plus `extra` outside every block) in base blocks of 4 nodes in node order:
// b1 = 001-004, b2 = 005-008, ...; one partition over all of them.
MakeCluster blockCluster(std::vector<std::uint32_t> blockSizes, std::size_t extra = 0,
                         std::size_t blocks = 4) {
  MakeCluster c(4 * blocks + extra);
  c.partition("train");
  c.ref().partitions[0].isDefault = true;
  for (std::size_t b = 0; b < blocks; ++b) {
    slurm::TopologyBlock block;
    block.name = "b" + std::to_string(b + 1);
    for (std::size_t i = 4 * b + 1; i <= 4 * b + 4; ++i)
      block.nodes.push_back(testing::nodeName(i));
    c.ref().topology.blocks.push_back(std::move(block));
  }
  c.ref().topology.blockSizes = std::move(blockSizes);
  return c;
}

void occupy(MakeCluster& c, const std::vector<std::size_t>& busy) {
  for (std::size_t n : busy) {
    c.job(MakeJob().nodes(1).gpus(8).exclusive().time(testing::kDay).running(kT0 - 60, {idx(n)}));
  }
}

// Places `job` (id 100); empty when it does not start.
std::vector<NodeIndex> placeJob(MakeCluster c, MakeJob job) {
  c.job(job.id(100));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  const Start* s = testing::findStart(plan, 100);
  return s == nullptr ? std::vector<NodeIndex>{} : s->nodes;
}

// Places a `--nodes=N --gres=gpu:8` job.
std::vector<NodeIndex> place(MakeCluster c, std::uint32_t nodes) {
  return placeJob(std::move(c), MakeJob().nodes(nodes).gpus(8));
}

std::vector<NodeIndex> concat(std::vector<NodeIndex> a, const std::vector<NodeIndex>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<NodeIndex> nodes(const std::vector<std::size_t>& oneBased) {
  std::vector<NodeIndex> v;
  for (std::size_t n : oneBased) v.push_back(idx(n));
  return v;
}

std::vector<std::uint32_t> levels(const Topology& t) {
  return {t.blockLevels().begin(), t.blockLevels().end()};
}

TEST(BlockTopology, LevelsAreSlurmsBlockLevels) {
  // block_record.c _read_topo_file: without BlockSizes, bit_nset(block_levels, 0, 4): 1, 2, 4, 8
  // and 16 base blocks, whatever the block count.
  ClusterState state(blockCluster({}).obj(), kT0);
  const Topology& t = state.topology();
  ASSERT_TRUE(t.isBlock());
  EXPECT_EQ(t.blockCount(), 4u);
  EXPECT_EQ(t.baseBlockNodes(), 4u);
  EXPECT_EQ(levels(t), (std::vector<std::uint32_t>{1, 2, 4, 8, 16}));
  EXPECT_EQ(t.leafCount(), 4u);
  EXPECT_EQ(t.rootCount(), 1u);
  EXPECT_EQ(t.leafOf(idx(6)), 1u);
  // With BlockSizes: each value over the first, kept even above the block count.
  const struct {
    std::vector<std::uint32_t> sizes;
    std::vector<std::uint32_t> levels;
  } cases[] = {
      {{4, 16}, {1, 4}},
      {{4, 8, 16}, {1, 2, 4}},
      {{4, 64}, {1, 16}},
      {{2, 8}, {1, 4}},  // BlockSizes' base (2) below the blocks' node count (4)
  };
  for (const auto& tc : cases) {
    ClusterState given(blockCluster(tc.sizes).obj(), kT0);
    EXPECT_EQ(levels(given.topology()), tc.levels) << tc.sizes.back();
    EXPECT_EQ(given.topology().baseBlockNodes(), tc.sizes.front());
  }
}

// eval_nodes_block: the level comes from the job's size, and among the aggregates that suffice
// the one with the fewest usable nodes wins, the last on a tie (bnc <= block_node_cnt). Inside
// it (_choose_best_bblock) the tightest base block that holds the rest, else the fullest, the
// last on a tie; nodes in index order.
TEST(BlockTopology, BestFitAggregateAndBaseBlockLastOnTies) {
  const struct {
    const char* name;
    std::vector<std::uint32_t> sizes;
    std::vector<std::size_t> busy;
    std::uint32_t nodes;
    std::vector<NodeIndex> expected;
  } cases[] = {
      {"idle 4 nodes: every base block ties, the last", {4, 8, 16}, {}, 4, range(13, 16)},
      {"idle 2 nodes: the last base block, first nodes", {4, 8, 16}, {}, 2, range(13, 14)},
      {"idle 1 node", {4, 8, 16}, {}, 1, range(13, 13)},
      {"b1 holds exactly 2", {4, 8, 16}, {1, 2, 5}, 2, range(3, 4)},
      {"b2 has the fewest that suffice", {4, 8, 16}, {1, 2, 5}, 3, range(6, 8)},
      {"b3 and b4 tie: b4", {4, 8, 16}, {1, 2, 5}, 4, range(13, 16)},
      {"one node: the tightest base block", {4, 8, 16}, {1, 2, 5}, 1, range(3, 3)},
      // 6 nodes: the 8-node level; b1+b2 (6 usable) beats b3+b4 (8). In it b2 (fullest, holds
      // not the 6) first, then b1 holds the rest.
      {"8-node aggregate, best fit", {4, 8, 16}, {1, 2}, 6, range(3, 8)},
      {"8 nodes: only b3+b4", {4, 8, 16}, {1, 2}, 8, range(9, 16)},
      // 6 nodes, idle: b3+b4 (tie, last); b4 then the last fitting base block b3.
      {"idle 6 nodes", {4, 8, 16}, {}, 6, concat(range(9, 10), range(13, 16))},
  };
  for (const auto& tc : cases) {
    MakeCluster c = blockCluster(tc.sizes);
    occupy(c, tc.busy);
    EXPECT_EQ(place(c, tc.nodes), tc.expected) << tc.name;
  }
}

TEST(BlockTopology, DownAndDrainedNodesAreNotFree) {
  MakeCluster c = blockCluster({4, 8, 16});
  c.state(1, NodeState::kDown).state(6, NodeState::kDrain);
  EXPECT_EQ(place(c, 4), range(13, 16));     // b3 and b4 tie: the last
  EXPECT_EQ(place(c, 3), nodes({5, 7, 8}));  // b1 and b2 tie (3 each): the last
}

// eval_nodes_block: block_level = bit_ffs_from_bit(block_levels, ceil(log2(base blocks))): the
// size alone fixes the level, and when no aggregate of it suffices the job waits ("unable to
// find block"), even if a larger level would hold it.
TEST(BlockTopology, TheJobSizeFixesTheLevel) {
  const struct {
    const char* name;
    std::vector<std::uint32_t> sizes;
    std::vector<std::size_t> busy;
    std::uint32_t nodes;
    std::vector<NodeIndex> expected;
  } cases[] = {
      // Two free nodes per base block: 3 nodes need one base block, none has them.
      {"3 nodes stay in a base block", {4, 8, 16}, {1, 2, 5, 6, 9, 10, 13, 14}, 3, {}},
      {"2 nodes do fit", {4, 8, 16}, {1, 2, 5, 6, 9, 10, 13, 14}, 2, range(15, 16)},
      // b2 and b3 free: 8 contiguous free nodes, but the aggregates are b1+b2 and b3+b4.
      {"aggregates are aligned", {4, 8}, {1, 2, 3, 4, 13, 14, 15, 16}, 8, {}},
      {"a 16-node level does not help", {4, 8, 16}, {1, 2, 3, 4, 13, 14, 15, 16}, 8, {}},
      // No 8-node level: 8 nodes go to the 16-node level (below).
      {"the next configured level", {4, 16}, {1, 2, 3, 4, 13, 14, 15, 16}, 8, range(5, 12)},
  };
  for (const auto& tc : cases) {
    MakeCluster c = blockCluster(tc.sizes);
    occupy(c, tc.busy);
    EXPECT_EQ(place(c, tc.nodes), tc.expected) << tc.name;
  }
}

// eval_nodes_block: with llblock_level the largest configured level below the job's need, the
// job may use at most max_llblock = ceil(N / llblock size) such groups (unless its block is
// exactly that many); the aggregate must hold N in its fullest max_llblock groups (avail_bnc).
// _choose_best_bblock: a group already used first, then the tightest group holding the rest,
// else the fullest.
TEST(BlockTopology, SpreadLimitOfTheLowerLevel) {
  const struct {
    const char* name;
    std::vector<std::uint32_t> sizes;
    std::size_t blocks;
    std::vector<std::size_t> busy;
    std::uint32_t nodes;
    std::vector<NodeIndex> expected;
  } cases[] = {
      // BlockSizes=4,16: 8 nodes use the 16-node block but at most 2 base blocks.
      {"idle: two base blocks", {4, 16}, 4, {}, 8, range(9, 16)},
      {"13 free but no 2 base blocks hold 8", {4, 16}, 4, {1, 5, 9}, 8, {}},
      // 6 nodes: b4 (fullest, ties with b2: the last), then b3 holds the rest tightest.
      {"fullest, then tightest", {4, 16}, 4, {1, 2, 3, 9}, 6, nodes({10, 11, 13, 14, 15, 16})},
      // 12 nodes, BlockSizes=4,8 over 6 blocks: larger than the largest block, so every block
      // is one aggregate, limited to 2 groups of 8. Groups b1+b2 (7), b3+b4 (8), b5+b6 (8):
      // b6 (fullest group, last), b5 (same group), then the tightest group holding 4: b1+b2,
      // its fitting base block b2.
      {"larger than the largest block", {4, 8}, 6, {1}, 12, concat(range(5, 8), range(17, 24))},
  };
  for (const auto& tc : cases) {
    MakeCluster c = blockCluster(tc.sizes, 0, tc.blocks);
    occupy(c, tc.busy);
    EXPECT_EQ(place(c, tc.nodes), tc.expected) << tc.name;
  }
}

// eval_nodes_block: block_cnt = ROUNDUP(blocks, bblock_per_block), so the last aggregate may be
// short; a job larger than every level uses all blocks as one (block_level < 0).
TEST(BlockTopology, ShortLastAggregateAndWholeSet) {
  // 6 blocks, BlockSizes=4,16: aggregates b1-b4 (16 usable) and b5-b6 (8): 8 nodes go to the
  // fewest usable that suffice, the short one.
  EXPECT_EQ(place(blockCluster({4, 16}, 0, 6), 8), range(17, 24));
  // BlockSizes=4,8 on 4 blocks, 12 nodes: one aggregate of every block (2 groups of 8 are the
  // whole set, no limit): b4, b3 (fullest, last on ties), then b2 holds the last 4 (last tie).
  EXPECT_EQ(place(blockCluster({4, 8}), 12), range(5, 16));
  MakeCluster c = blockCluster({4, 8});
  occupy(c, {1});
  EXPECT_EQ(place(c, 12), range(5, 16));
  EXPECT_TRUE(place(c, 16).empty());  // more than is free
}

// eval_nodes_block clears node_map and sets only nodes of the chosen block: nodes outside every
// block are never allocated, and requiring one fails ("requires nodes which are not in blocks").
TEST(BlockTopology, NodesOutsideEveryBlockAreNeverUsed) {
  MakeCluster c = blockCluster({4, 8, 16}, 1);  // 017 is in no block
  EXPECT_EQ(place(c, 1), range(13, 13));
  EXPECT_TRUE(placeJob(c, MakeJob().nodes(1).gpus(8).require({testing::nodeName(17)})).empty());
  std::vector<std::size_t> all;
  for (std::size_t n = 1; n <= 16; ++n) all.push_back(n);
  occupy(c, all);
  EXPECT_TRUE(place(c, 1).empty());  // the blocks are full: 017 is not a fallback
}

// eval_nodes_block with req_node_bitmap: the first aggregate holding a required node is the one
// (no best fit, no other level); every required node must be in it; the required nodes' base
// blocks give their other nodes first.
TEST(BlockTopology, RequiredNodesFixTheAggregate) {
  const struct {
    const char* name;
    std::vector<std::size_t> busy;
    std::vector<std::size_t> required;
    std::uint32_t nodes;
    std::vector<NodeIndex> expected;
  } cases[] = {
      // 2 nodes with 001: b1 (not the tighter b2, not the last b4).
      {"required base block", {5, 6}, {1}, 2, range(1, 2)},
      // 6 nodes with 001: b1+b2 has 5 usable; b3+b4 would hold 6 but lacks 001.
      {"no escape to another aggregate", {5, 6, 7}, {1}, 6, {}},
      {"required nodes in two aggregates", {}, {1, 9}, 6, {}},
      // 6 nodes with 005: b2 first (its 3 other nodes), then 2 of b1, in node order.
      {"the required block's nodes first", {}, {5}, 6, nodes({1, 2, 5, 6, 7, 8})},
  };
  for (const auto& tc : cases) {
    MakeCluster c = blockCluster({4, 8, 16});
    occupy(c, tc.busy);
    std::vector<std::string> names;
    for (std::size_t n : tc.required) names.push_back(testing::nodeName(n));
    EXPECT_EQ(placeJob(c, MakeJob().nodes(tc.nodes).gpus(8).require(names)), tc.expected)
        << tc.name;
  }
}

// Slurm's allocation is a node bitmap: ranks in node order, whatever the blocks' file order.
TEST(BlockTopology, RanksFollowNodeOrder) {
  MakeCluster c(8);
  c.partition("train");
  c.ref().partitions[0].isDefault = true;
  for (std::size_t b = 0; b < 2; ++b) {
    slurm::TopologyBlock block;
    block.name = "b" + std::to_string(b + 1);
    for (std::size_t i = 1; i <= 4; ++i) block.nodes.push_back(testing::nodeName(4 * (1 - b) + i));
    c.ref().topology.blocks.push_back(std::move(block));
  }
  c.ref().topology.blockSizes = {4, 8};
  EXPECT_EQ(place(c, 8), range(1, 8));
}

// --switches is read only by topology/tree (eval_nodes_tree.c); topology/block ignores it.
TEST(BlockTopology, SwitchesLimitDoesNotApply) {
  EXPECT_EQ(
      placeJob(blockCluster({4, 8, 16}), MakeJob().nodes(8).gpus(8).switches(1, testing::kDay)),
      range(9, 16));
}

}  // namespace
}  // namespace kubeslurm::core
