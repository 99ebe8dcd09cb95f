// Block topology placement (topology/block, Slurm 23.11+).
//
// The behaviour tested, as Slurm documents it (doc/html/topology.shtml "topology/block" and
// topology.conf(5) BlockName/BlockSizes):
//  - each BlockName= is a base block of nodes; BlockSizes= lists the aggregated block sizes a job
//    may be placed in (the first value is the base block size, each other one the base size times
//    a power of two); by default the base block size and its power-of-two multiples up to the
//    whole set of blocks;
//  - an aggregated block is a run of contiguous base blocks aligned to its size;
//  - a job is placed within the smallest block level that can hold it, in the block whose free
//    nodes fit it best;
//  - a job larger than the largest block size spans blocks of that size.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "operator/core/placement.h"
#include "operator/core/topology.h"
#include "tests/unit/core/builders.h"

namespace kubeslurm::core {
namespace {

using testing::idx;
using testing::kT0;
using testing::MakeCluster;
using testing::MakeJob;
using testing::range;

// 16 nodes (or `extra` more outside every block) in base blocks b1 = 001-004, b2 = 005-008,
// b3 = 009-012, b4 = 013-016; one partition over all of them.
MakeCluster blockCluster(std::vector<std::uint32_t> blockSizes, std::size_t extra = 0) {
  MakeCluster c(16 + extra);
  c.partition("train");
  c.ref().partitions[0].isDefault = true;
  for (std::size_t b = 0; b < 4; ++b) {
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

// Places a `--nodes=N --gres=gpu:8` job; empty when it does not start.
std::vector<NodeIndex> place(MakeCluster c, std::uint32_t nodes) {
  c.job(MakeJob().id(100).nodes(nodes).gpus(8));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  const Start* s = testing::findStart(plan, 100);
  return s == nullptr ? std::vector<NodeIndex>{} : s->nodes;
}

std::vector<NodeIndex> concat(std::vector<NodeIndex> a, const std::vector<NodeIndex>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(BlockTopology, LevelsDefaultToPowerOfTwoMultiplesOfTheBaseBlock) {
  // BlockSizes unset: the base block size (4 nodes) and 8, 16: 1, 2, 4 base blocks.
  ClusterState state(blockCluster({}).obj(), kT0);
  const Topology& t = state.topology();
  ASSERT_TRUE(t.isBlock());
  EXPECT_EQ(t.blockCount(), 4u);
  EXPECT_EQ(t.baseBlockNodes(), 4u);
  EXPECT_EQ(std::vector<std::uint32_t>(t.blockLevels().begin(), t.blockLevels().end()),
            (std::vector<std::uint32_t>{1, 2, 4}));
  EXPECT_EQ(t.leafCount(), 4u);
  EXPECT_EQ(t.rootCount(), 1u);  // one fabric: jobs may span blocks
  EXPECT_EQ(t.leafOf(idx(6)), 1u);
  // Given BlockSizes: only those levels (in base blocks).
  ClusterState given(blockCluster({4, 16}).obj(), kT0);
  EXPECT_EQ(std::vector<std::uint32_t>(given.topology().blockLevels().begin(),
                                       given.topology().blockLevels().end()),
            (std::vector<std::uint32_t>{1, 4}));
}

TEST(BlockTopology, IdleClusterFillsTheFirstBaseBlock) {
  EXPECT_EQ(place(blockCluster({4, 8, 16}), 4), range(1, 4));
  EXPECT_EQ(place(blockCluster({4, 8, 16}), 2), range(1, 2));
  EXPECT_EQ(place(blockCluster({4, 8, 16}), 1), range(1, 1));
}

TEST(BlockTopology, BestFitBaseBlockAmongBusyNodes) {
  MakeCluster c = blockCluster({4, 8, 16});
  occupy(c, {1, 2, 5});                 // b1: 2 free, b2: 3 free, b3 and b4: 4 free
  EXPECT_EQ(place(c, 2), range(3, 4));  // b1 has exactly 2 free
  EXPECT_EQ(place(c, 3), range(6, 8));  // b2 has the fewest that suffice
  EXPECT_EQ(place(c, 4), range(9, 12));
  EXPECT_EQ(place(c, 1), range(3, 3));  // one node: still the tightest base block
}

TEST(BlockTopology, DownAndDrainedNodesAreNotFree) {
  MakeCluster c = blockCluster({4, 8, 16});
  c.state(1, NodeState::kDown).state(6, NodeState::kDrain);
  EXPECT_EQ(place(c, 4), range(9, 12));
  EXPECT_EQ(place(c, 3), range(2, 4));
}

TEST(BlockTopology, SmallestLevelThatHoldsTheJobThenBestFitAggregate) {
  MakeCluster c = blockCluster({4, 8, 16});
  occupy(c, {1, 2});  // 8-node aggregates: b1+b2 has 6 free, b3+b4 has 8
  // 6 nodes fit no base block: the 8-node level, in b1+b2 (6 free beats 8); b2 first (it is the
  // fuller base block), then b1. Ranks in block order.
  EXPECT_EQ(place(c, 6), concat(range(3, 4), range(5, 8)));
  // 8 nodes: only b3+b4 holds them.
  EXPECT_EQ(place(c, 8), range(9, 16));
}

TEST(BlockTopology, AggregatesAreAlignedToTheirSize) {
  MakeCluster c = blockCluster({4, 8});
  occupy(c, {1, 2, 3, 4, 13, 14, 15, 16});  // b2 and b3 free: 8 contiguous free nodes
  // b2+b3 is not an 8-node block (aggregates are b1+b2 and b3+b4), and 8 nodes are not larger
  // than the largest block size, so the job may not span: it waits.
  EXPECT_TRUE(place(c, 8).empty());
  // With a 16-node level the whole set is a block and holds it.
  MakeCluster whole = blockCluster({4, 8, 16});
  occupy(whole, {1, 2, 3, 4, 13, 14, 15, 16});
  EXPECT_EQ(place(whole, 8), range(5, 12));
}

TEST(BlockTopology, JobsLargerThanTheLargestBlockSpan) {
  // BlockSizes=4,8: a 12-node job is larger than the largest block (8) and spans two of them.
  EXPECT_EQ(place(blockCluster({4, 8}), 12), range(1, 12));
  MakeCluster c = blockCluster({4, 8});
  occupy(c, {1});  // b1+b2: 7 free, b3+b4: 8 free
  // The fuller 8-node block first (b3+b4), then 4 nodes from the base block of b1+b2 that holds
  // them exactly (b2).
  EXPECT_EQ(place(c, 12), range(5, 16));
  // More than is free: nothing.
  EXPECT_TRUE(place(c, 16).empty());
}

TEST(BlockTopology, NodesOutsideEveryBlockComeLast) {
  MakeCluster c = blockCluster({4, 8, 16}, 1);  // 017 is in no block
  EXPECT_EQ(place(c, 1), range(1, 1));
  std::vector<std::size_t> all;
  for (std::size_t n = 1; n <= 16; ++n) all.push_back(n);
  occupy(c, all);
  EXPECT_EQ(place(c, 1), range(17, 17));  // the blocks are full: the outside node serves alone
  EXPECT_TRUE(place(c, 2).empty());
}

}  // namespace
}  // namespace kubeslurm::core
