// Gang placement and topology/tree node selection.
#include "kubeslurm/core/placement.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kubeslurm/core/cluster_state.h"
#include "kubeslurm/core/topology.h"
#include "tests/unit/core/builders.h"

namespace kubeslurm::core {
namespace {

using testing::idx;
using testing::kHour;
using testing::kT0;
using testing::MakeCluster;
using testing::MakeJob;
using testing::range;
using testing::referenceCluster;

// One exclusive single-node job on each busy node, as the reference rig's busy nodes were made.
void occupy(MakeCluster& c, const std::vector<std::size_t>& busy) {
  for (std::size_t n : busy) {
    c.job(MakeJob().nodes(1).gpus(8).exclusive().time(testing::kDay).running(kT0 - 60, {idx(n)}));
  }
}

struct GoalCRow {
  std::string name;
  std::vector<std::size_t> busy;
  std::vector<std::size_t> down;
  std::vector<std::size_t> drained;
  std::uint32_t nodes;
  std::vector<NodeIndex> expected;
};

// reference/slurm-22.05.md, "Goal C: placement under topology/tree", row by row: jobs
// `--nodes=N --ntasks-per-node=1 --gres=gpu:8` on leaf1 = 001-004, leaf2 = 005-008, spine.
class GoalCTable : public ::testing::TestWithParam<GoalCRow> {};

TEST_P(GoalCTable, PicksTheNodesSlurmPicked) {
  const GoalCRow& row = GetParam();
  MakeCluster c = referenceCluster();
  occupy(c, row.busy);
  for (std::size_t n : row.down) c.state(n, NodeState::kDown);
  for (std::size_t n : row.drained) c.state(n, NodeState::kDrain);
  c.job(MakeJob().id(100).nodes(row.nodes).gpus(8));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  const Start* s = testing::findStart(plan, 100);
  ASSERT_NE(s, nullptr) << row.name;
  EXPECT_EQ(s->nodes, row.expected) << row.name;
  EXPECT_FALSE(s->backfilled);
}

// The same rows with the tree taken from node labels (Snapshot::topologyLabels) instead of
// topology.conf: leaf1/leaf2 under spine, as the reference's topology.conf has them.
TEST_P(GoalCTable, PicksTheSameNodesWithTopologyFromNodeLabels) {
  const GoalCRow& row = GetParam();
  MakeCluster c = referenceCluster();
  c.ref().topology = {};
  c.ref().topologyLabels = {"kubeslurm.io/leaf", "kubeslurm.io/spine"};
  for (std::size_t n = 1; n <= 8; ++n) {
    auto& labels = c.ref().nodes[n - 1].labels;
    labels["kubeslurm.io/leaf"] = n <= 4 ? "leaf1" : "leaf2";
    labels["kubeslurm.io/spine"] = "spine";
  }
  occupy(c, row.busy);
  for (std::size_t n : row.down) c.state(n, NodeState::kDown);
  for (std::size_t n : row.drained) c.state(n, NodeState::kDrain);
  c.job(MakeJob().id(100).nodes(row.nodes).gpus(8));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  const Start* s = testing::findStart(plan, 100);
  ASSERT_NE(s, nullptr) << row.name;
  EXPECT_EQ(s->nodes, row.expected) << row.name;
  EXPECT_FALSE(s->backfilled);
}

INSTANTIATE_TEST_SUITE_P(
    ReferenceRows, GoalCTable,
    ::testing::Values(
        GoalCRow{"none busy: 4 nodes take all of leaf1", {}, {}, {}, 4, range(1, 4)},
        GoalCRow{
            "001,002 busy: 4 nodes take leaf2 rather than span", {1, 2}, {}, {}, 4, range(5, 8)},
        GoalCRow{"001,002 busy: 2 nodes best-fit the leaf with exactly 2 free",
                 {1, 2},
                 {},
                 {},
                 2,
                 {idx(3), idx(4)}},
        GoalCRow{"001,002 busy: 3 nodes", {1, 2}, {}, {}, 3, range(5, 7)},
        GoalCRow{"001,002 busy: 1 node", {1, 2}, {}, {}, 1, {idx(3)}},
        GoalCRow{"001,002,005 busy: 4 nodes span, 3 from the fuller leaf first",
                 {1, 2, 5},
                 {},
                 {},
                 4,
                 {idx(3), idx(6), idx(7), idx(8)}},
        GoalCRow{"007 down, 008 drained: 4 nodes", {}, {7}, {8}, 4, range(1, 4)},
        GoalCRow{"007 down, 008 drained: 5 nodes", {}, {7}, {8}, 5, range(1, 5)}),
    [](const ::testing::TestParamInfo<GoalCRow>& param) {
      return "Row" + std::to_string(param.index);
    });

TEST(GangPlacement, StartsAllRanksOrNone) {
  MakeCluster c = referenceCluster();
  occupy(c, {1, 2, 3, 5, 6, 7});
  c.job(MakeJob().id(100).nodes(3).gpus(8));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_EQ(testing::findStart(plan, 100), nullptr);
  ASSERT_NE(testing::findPending(plan, 100), nullptr);
  EXPECT_EQ(testing::pendingOf(plan, 100).reason, slurm::PendingReason::kResources);
}

TEST(GangPlacement, PartialJobsPackOntoTheMostUsedNodeThatFits) {
  MakeCluster c(4);
  c.partition("train");
  // Node 1: 6 GPUs used (2 free); node 2: 4 used (4 free); nodes 3-4 idle.
  c.job(MakeJob().gpus(6).running(kT0 - 10, {idx(1)}));
  c.job(MakeJob().gpus(4).running(kT0 - 10, {idx(2)}));
  c.job(MakeJob().id(100).nodes(1).gpus(3));
  c.job(MakeJob().id(101).nodes(1).gpus(2).submit(kT0 + 1));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  ASSERT_NE(testing::findStart(plan, 100), nullptr);
  EXPECT_EQ(testing::findStart(plan, 100)->nodes, std::vector<NodeIndex>{idx(2)});
  ASSERT_NE(testing::findStart(plan, 101), nullptr);
  EXPECT_EQ(testing::findStart(plan, 101)->nodes, std::vector<NodeIndex>{idx(1)});
}

TEST(GangPlacement, SmallJobsGoToTheBusierLeafSoWholeLeavesStayFree) {
  MakeCluster c = referenceCluster();
  c.job(MakeJob().gpus(4).running(kT0 - 10, {idx(6)}));
  c.job(MakeJob().id(100).nodes(1).gpus(1));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  ASSERT_NE(testing::findStart(plan, 100), nullptr);
  EXPECT_EQ(testing::findStart(plan, 100)->nodes, std::vector<NodeIndex>{idx(6)});
}

TEST(GangPlacement, ExclusiveJobsNeedNodesWithoutOtherJobs) {
  MakeCluster c(2);
  c.partition("train");
  c.job(MakeJob().gpus(1).running(kT0 - 10, {idx(1)}));
  c.job(MakeJob().id(100).nodes(1).gpus(1).exclusive());
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  ASSERT_NE(testing::findStart(plan, 100), nullptr);
  EXPECT_EQ(testing::findStart(plan, 100)->nodes, std::vector<NodeIndex>{idx(2)});
}

TEST(GangPlacement, ForeignLoadReducesCapacityAndIsNeverTouched) {
  MakeCluster c(2);
  c.partition("train");
  c.foreign(1, {4, 8000, 0});
  c.job(MakeJob().id(100).nodes(2).gpus(8));
  c.job(MakeJob().id(101).nodes(1).gpus(4).submit(kT0 + 1));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_EQ(testing::findStart(plan, 100), nullptr);
  // The 4-GPU job may use what the foreign pods left on node 1 (backfill: it ends before the
  // 8-GPU gang could start there anyway, which is never while the foreign load stays).
  const Start* s = testing::findStart(plan, 101);
  ASSERT_NE(s, nullptr);
}

TEST(GangPlacement, RequiredNodesAreIncludedAndTheRestComesFromTheirLeaf) {
  MakeCluster c = referenceCluster();
  c.job(MakeJob().id(100).nodes(2).gpus(8).require({"gpu-node-006"}));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  const Start* s = testing::findStart(plan, 100);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->nodes, (std::vector<NodeIndex>{idx(5), idx(6)}));
}

TEST(GangPlacement, ExcludedNodesAndConstraintsFilter) {
  MakeCluster c = referenceCluster();
  c.ref().nodes[idx(7)].features = {"h100"};
  c.ref().nodes[idx(8)].features = {"h100"};
  c.job(MakeJob().id(100).nodes(1).gpus(8).constraint("h100").exclude({"gpu-node-007"}));
  c.job(MakeJob().id(101).nodes(1).gpus(8).constraint("a100").submit(kT0 + 5));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  ASSERT_NE(testing::findStart(plan, 100), nullptr);
  EXPECT_EQ(testing::findStart(plan, 100)->nodes, std::vector<NodeIndex>{idx(8)});
  ASSERT_NE(testing::findPending(plan, 101), nullptr);
  EXPECT_EQ(testing::pendingOf(plan, 101).reason, slurm::PendingReason::kBadConstraints);
}

// -C "[rack1|rack2]" (matching OR): every node of the job has the same one of the features,
// tried in order, the first that can take it now winning (node_scheduler.c walks the features in
// order). rack1 is nodes 1-4, rack2 nodes 5-8, with a running job on nodes 1-3.
MakeCluster racks() {
  MakeCluster c(8);
  c.partition("train");
  for (std::size_t n = 1; n <= 8; ++n)
    c.ref().nodes[idx(n)].features = {n <= 4 ? "rack1" : "rack2"};
  return c;
}

Job matching(JobId id, std::uint32_t nodes, std::vector<std::string> features) {
  Job job = MakeJob().id(id).nodes(nodes).gpus(8).obj();
  job.matchingOneOf = std::move(features);
  return job;
}

std::vector<NodeIndex> sorted(std::vector<NodeIndex> nodes) {
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

TEST(GangPlacement, AMatchingOrTakesAllItsNodesWithOneFeatureInOrder) {
  MakeCluster c = racks();
  c.job(matching(100, 2, {"rack1", "rack2"}));
  Plan plan = core::plan(c.obj(), kT0, Budget{});
  const Start* first = testing::findStart(plan, 100);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(sorted(first->nodes), (std::vector<NodeIndex>{idx(1), idx(2)}));  // rack1, first

  // rack1 has one free node: not one from each rack (as "rack1|rack2" would), both from rack2.
  c.job(MakeJob().id(1).nodes(3).gpus(8).running(kT0 - 60, {idx(1), idx(2), idx(3)}));
  plan = core::plan(c.obj(), kT0, Budget{});
  const Start* second = testing::findStart(plan, 100);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(sorted(second->nodes), (std::vector<NodeIndex>{idx(5), idx(6)}));
}

// While some feature could take it, it waits for resources and holds the partition: a job
// behind it that needs the same nodes does not start first. A feature no node has is not a
// wait for resources.
TEST(GangPlacement, AMatchingOrWaitsForResourcesWhileOneOfItsFeaturesCouldFit) {
  MakeCluster c = racks();
  c.job(MakeJob().id(1).nodes(3).gpus(8).time(kHour).running(kT0 - 60, {idx(1), idx(2), idx(3)}));
  c.job(MakeJob().id(2).nodes(3).gpus(8).time(kHour).running(kT0 - 60, {idx(5), idx(6), idx(7)}));
  c.job(matching(100, 4, {"nosuch", "rack2", "rack1"}));
  Job behind = MakeJob().id(101).nodes(2).gpus(8).time(2 * kHour).submit(kT0 + 5).obj();
  c.job(behind);
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_EQ(testing::findStart(plan, 100), nullptr);
  EXPECT_EQ(testing::pendingOf(plan, 100).reason, slurm::PendingReason::kResources);
  ASSERT_TRUE(testing::pendingOf(plan, 100).estimatedStart.has_value());
  // Nodes 4 and 8 are free, but taking them for two hours would delay 100's reservation.
  EXPECT_EQ(testing::findStart(plan, 101), nullptr);

  MakeCluster none = racks();
  none.job(matching(100, 1, {"nosuch", "other"}));
  EXPECT_EQ(testing::pendingOf(core::plan(none.obj(), kT0, Budget{}), 100).reason,
            slurm::PendingReason::kBadConstraints);
}

TEST(GangPlacement, UntoleratedNoScheduleTaintKeepsRanksOff) {
  MakeCluster c(2);
  c.partition("train");
  c.ref().nodes[0].taints = {{"dedicated", "inference", "NoSchedule"}};
  c.job(MakeJob().id(100).nodes(2).gpus(8));
  c.job(MakeJob().id(101).nodes(2).gpus(8).tolerate("dedicated").submit(kT0 + 1));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  EXPECT_EQ(testing::findStart(plan, 100), nullptr);
  // The tolerating job is behind in the same partition: backfill starts it (100 can never run
  // while the taint stays, so nothing is delayed).
  ASSERT_NE(testing::findStart(plan, 101), nullptr);
}

TEST(GangPlacement, NodeRangeTakesUpToMaxNodes) {
  MakeCluster c = referenceCluster();
  occupy(c, {1, 2, 3});
  c.job(MakeJob().id(100).nodeRange(2, 8).gpus(8));
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  const Start* s = testing::findStart(plan, 100);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->nodes.size(), 5u);
}

// ---------------------------------------------------------------------------------------------
// --contiguous, rule by rule (placement.h; cons_tres job_test.c _eval_nodes, 22.05). The
// reference cluster: gpu-node-001..008, leaf1 = 001-004, leaf2 = 005-008, 8 GPUs each.

struct ContiguousRow {
  std::string name;
  std::vector<std::size_t> busy;  // whole nodes taken by running jobs
  std::uint32_t minNodes;
  std::uint32_t maxNodes;
  std::vector<std::string> required;
  std::vector<NodeIndex> expected;  // empty: the job waits
};

class ContiguousTable : public ::testing::TestWithParam<ContiguousRow> {};

TEST_P(ContiguousTable, TakesConsecutiveNodes) {
  const ContiguousRow& row = GetParam();
  MakeCluster c = referenceCluster();
  occupy(c, row.busy);
  MakeJob job = MakeJob().id(100).nodeRange(row.minNodes, row.maxNodes).gpus(8).contiguous();
  if (!row.required.empty()) job.require(row.required);
  c.job(job);
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  const Start* s = testing::findStart(plan, 100);
  if (row.expected.empty()) {
    EXPECT_EQ(s, nullptr) << row.name;
    ASSERT_NE(testing::findPending(plan, 100), nullptr) << row.name;
    EXPECT_EQ(testing::pendingOf(plan, 100).reason, slurm::PendingReason::kResources) << row.name;
    return;
  }
  ASSERT_NE(s, nullptr) << row.name;
  EXPECT_EQ(s->nodes, row.expected) << row.name;
}

INSTANTIATE_TEST_SUITE_P(
    Rules, ContiguousTable,
    ::testing::Values(
        // No topology: Slurm skips _eval_nodes_topo for contiguous jobs, so 3 nodes across the
        // two leaves are fine where the tree would take one leaf's.
        ContiguousRow{"idle: the run's first nodes", {}, 3, 3, {}, range(1, 3)},
        ContiguousRow{"across leaves when the run does", {1, 2}, 4, 4, {}, range(3, 6)},
        // Runs 001-002 (2 nodes) and 005-008 (4): 2 nodes go to the tighter one, though the
        // tree would pick the same leaf either way.
        ContiguousRow{"the tightest run that holds it", {3, 4}, 2, 2, {}, range(1, 2)},
        // Runs 001, 003-004, 006-008: the 2-node job skips the 1-node run for the 2-node one.
        ContiguousRow{"a run too small is skipped", {2, 5}, 2, 2, {}, range(3, 4)},
        // 004 and 006 free nodes are not consecutive: without --contiguous this would start.
        ContiguousRow{"free nodes apart: it waits", {1, 2, 3, 5, 7, 8}, 2, 2, {}, {}},
        // Runs 001-003 and 005-008 both hold the minimum; the tighter one is taken whole (Slurm's
        // next pass would add a node of the other run; a contiguous job stops there).
        ContiguousRow{
            "a range: the tightest run that holds its minimum", {4}, 2, 8, {}, range(1, 3)},
        ContiguousRow{"a range within one run", {}, 2, 3, {}, range(1, 3)},
        // Required nodes: a window from the first of them, upward, then downward at the end.
        ContiguousRow{"required: upward from it", {}, 3, 3, {"gpu-node-003"}, range(3, 5)},
        ContiguousRow{
            "required: downward at the run's end", {}, 3, 3, {"gpu-node-007"}, range(6, 8)},
        ContiguousRow{"required apart: the window holds both",
                      {},
                      3,
                      3,
                      {"gpu-node-002", "gpu-node-004"},
                      range(2, 4)},
        ContiguousRow{"required farther apart than the job's size",
                      {},
                      2,
                      2,
                      {"gpu-node-002", "gpu-node-004"},
                      {}},
        ContiguousRow{"required in two runs", {3}, 3, 3, {"gpu-node-002", "gpu-node-004"}, {}}),
    [](const ::testing::TestParamInfo<ContiguousRow>& param) {
      return "Row" + std::to_string(param.index);
    });

// A one-node contiguous job is placed as any job is (it packs onto the busiest node that fits).
TEST(GangPlacement, AOneNodeContiguousJobPacksAsAnyJob) {
  MakeCluster c = referenceCluster();
  c.job(MakeJob().gpus(4).running(kT0 - 10, {idx(6)}));
  c.job(MakeJob().id(100).nodes(1).gpus(2).contiguous());
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  ASSERT_NE(testing::findStart(plan, 100), nullptr);
  EXPECT_EQ(testing::findStart(plan, 100)->nodes, std::vector<NodeIndex>{idx(6)});
}

// Backfill estimates a contiguous job's start on consecutive nodes too: 001, 003 and 005 are
// free in an hour (any 3-node job could start then), 001-005 in two.
TEST(GangPlacement, BackfillWaitsForConsecutiveNodesForAContiguousJob) {
  for (const bool contiguous : {false, true}) {
    MakeCluster c = referenceCluster();
    const auto busy = [&c](std::size_t n, Duration left) {
      c.job(MakeJob().nodes(1).gpus(8).exclusive().time(left + 60).running(kT0 - 60, {idx(n)}));
    };
    busy(1, kHour);
    busy(2, 2 * kHour);
    busy(4, 2 * kHour);
    busy(5, kHour);
    for (std::size_t n = 6; n <= 8; ++n) busy(n, 3 * kHour);
    MakeJob job = MakeJob().id(100).nodes(3).gpus(8);
    if (contiguous) job.contiguous();
    c.job(job);
    const Plan plan = core::plan(c.obj(), kT0, Budget{});
    EXPECT_EQ(testing::findStart(plan, 100), nullptr);
    const PendingDecision& pending = testing::pendingOf(plan, 100);
    ASSERT_TRUE(pending.estimatedStart.has_value()) << contiguous;
    EXPECT_EQ(*pending.estimatedStart, kT0 + (contiguous ? 2 : 1) * kHour) << contiguous;
  }
}

// ---------------------------------------------------------------------------------------------
// The leaf chooser alone, on a three-level tree: pod1 = {l1, l2}, pod2 = {l3, l4}, core above.

Topology threeLevels(std::vector<std::string>& names, NodeNameIndex& index) {
  slurm::TopologyConf conf;
  for (int leaf = 0; leaf < 4; ++leaf) {
    slurm::TopologySwitch sw;
    sw.name = "l" + std::to_string(leaf + 1);
    for (std::size_t i = 0; i < 4; ++i) {
      sw.nodes.push_back(names[static_cast<std::size_t>(leaf) * 4 + i]);
    }
    conf.switches.push_back(sw);
  }
  conf.switches.push_back({"pod1", {}, {"l1", "l2"}, 1});
  conf.switches.push_back({"pod2", {}, {"l3", "l4"}, 1});
  conf.switches.push_back({"core", {}, {"pod1", "pod2"}, 1});
  for (std::size_t i = 0; i < names.size(); ++i) index.emplace(names[i], static_cast<NodeIndex>(i));
  return Topology::fromConf(conf, names.size(), index);
}

TEST(LeafChooser, LevelsAndHopsFollowTheTree) {
  std::vector<std::string> names;
  for (int i = 1; i <= 16; ++i) names.push_back(testing::nodeName(static_cast<std::size_t>(i)));
  NodeNameIndex index;
  const Topology t = threeLevels(names, index);
  EXPECT_EQ(t.leafCount(), 4u);
  EXPECT_EQ(t.level(4), 1u);  // pod1
  EXPECT_EQ(t.level(6), 2u);  // core
  EXPECT_EQ(t.leafDistance(0, 1), 2u);
  EXPECT_EQ(t.leafDistance(0, 2), 4u);
  EXPECT_EQ(t.rootCount(), 1u);
}

TEST(LeafChooser, PrefersOnePodWhenNoLeafFits) {
  std::vector<std::string> names;
  for (int i = 1; i <= 16; ++i) names.push_back(testing::nodeName(static_cast<std::size_t>(i)));
  NodeNameIndex index;
  const Topology t = threeLevels(names, index);
  LeafChooser chooser(t);
  std::vector<LeafTake> out;
  // l1: 3, l2: 1 (pod1 = 4); l3: 3, l4: 3 (pod2 = 6). A 5-node job fits no leaf; pod2 fits it.
  const std::vector<std::uint32_t> avail = {3, 1, 3, 3};
  ASSERT_TRUE(chooser.choose(avail, 5, {}, out));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[0].leaf == 2 || out[0].leaf == 3);
  EXPECT_TRUE(out[1].leaf == 2 || out[1].leaf == 3);
  EXPECT_EQ(out[0].take + out[1].take, 5u);
}

TEST(LeafChooser, FailsWhenTheTreeCannotHoldTheJob) {
  std::vector<std::string> names;
  for (int i = 1; i <= 16; ++i) names.push_back(testing::nodeName(static_cast<std::size_t>(i)));
  NodeNameIndex index;
  const Topology t = threeLevels(names, index);
  LeafChooser chooser(t);
  std::vector<LeafTake> out;
  EXPECT_FALSE(chooser.choose(std::vector<std::uint32_t>{1, 1, 1, 1}, 5, {}, out));
}

TEST(Topology, UnlistedNodesFormAnIslandAndFlatIsOneLeaf) {
  std::vector<std::string> names = {"a", "b", "c"};
  NodeNameIndex index;
  for (std::size_t i = 0; i < names.size(); ++i) index.emplace(names[i], static_cast<NodeIndex>(i));
  slurm::TopologyConf conf;
  conf.switches.push_back({"leaf", {"a", "b"}, {}, 1});
  const Topology t = Topology::fromConf(conf, names.size(), index);
  EXPECT_EQ(t.leafCount(), 2u);
  EXPECT_EQ(t.rootCount(), 2u);
  EXPECT_EQ(t.leafOf(2), 1u);
  EXPECT_EQ(t.leafDistance(0, 1), kInfiniteDistance);
  const Topology flat = Topology::fromConf({}, 3, index);
  EXPECT_EQ(flat.leafCount(), 1u);
  EXPECT_EQ(flat.leafNodes(0).size(), 3u);
}

TEST(Topology, NodeLabelsGiveTheSwitchRecordsOfATopologyConf) {
  std::vector<Node> nodes(6);
  const std::vector<std::string> keys = {"leaf", "spine"};
  for (std::size_t i = 0; i < nodes.size(); ++i) nodes[i].name = "n" + std::to_string(i);
  nodes[0].labels = {{"leaf", "b"}, {"spine", "s"}};
  nodes[1].labels = {{"leaf", "a"}, {"spine", "s"}};
  nodes[2].labels = {{"leaf", "b"}, {"spine", "other"}};  // b's first node said s: ignored above
  nodes[3].labels = {{"spine", "s"}};                     // no leaf label: outside the tree
  nodes[4].labels = {{"leaf", "s"}};                      // no spine: its leaf is a root
  nodes[5].labels = {{"leaf", ""}};                       // empty: as missing
  const slurm::TopologyConf conf = topologyFromLabels(nodes, keys);
  ASSERT_EQ(conf.switches.size(), 4u);
  EXPECT_EQ(conf.switches[0].name, "0:b");
  EXPECT_EQ(conf.switches[0].nodes, (std::vector<std::string>{"n0", "n2"}));
  EXPECT_EQ(conf.switches[1].name, "0:a");
  EXPECT_EQ(conf.switches[2].name, "0:s");  // a leaf may share its value with a spine
  EXPECT_EQ(conf.switches[3].name, "1:s");
  EXPECT_EQ(conf.switches[3].children, (std::vector<std::string>{"0:b", "0:a"}));

  NodeNameIndex index;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    index.emplace(nodes[i].name, static_cast<NodeIndex>(i));
  }
  const Topology t = Topology::fromConf(conf, nodes.size(), index);
  EXPECT_EQ(t.leafCount(), 4u);  // b, a, s and the island of n3, n5
  EXPECT_EQ(t.rootCount(), 3u);
  EXPECT_EQ(t.leafOf(3), t.leafOf(5));
  EXPECT_EQ(t.leafDistance(t.leafOf(0), t.leafOf(1)), 2u);
  EXPECT_EQ(t.leafDistance(t.leafOf(0), t.leafOf(4)), kInfiniteDistance);
}

// sbatch -p a,b without --mem*: where a partition's memory defaults give the job another shape
// (Job::otherShapes), that shape is what is placed there and what its MaxMemPerNode is checked
// against (slurmctld's job_limits_check, per partition tried).
TEST(Placement, EachPartitionOfAJobPlacesAndChecksItsOwnShape) {
  MakeCluster c(2);  // 500 GiB nodes
  c.partition("a").partition("b");
  Job job = MakeJob("a").gpus(1).memory(600 * testing::kGiB).obj();  // fits no node in a
  job.otherPartitions = {"b"};
  job.otherShapes = {{"b", 2000, 100 * testing::kGiB, false}};
  c.job(job);
  const Plan plan = core::plan(c.obj(), kT0, Budget{});
  ASSERT_EQ(plan.starts.size(), 1U);
  EXPECT_EQ(plan.starts[0].partition, "b");

  c.ref().partitions[1].maxMemoryBytesPerNode = 50 * testing::kGiB;  // b's limit: below its shape
  EXPECT_TRUE(core::plan(c.obj(), kT0, Budget{}).starts.empty());
  c.ref().partitions[1].maxMemoryBytesPerNode = 100 * testing::kGiB;
  EXPECT_EQ(core::plan(c.obj(), kT0, Budget{}).starts.size(), 1U);
}

}  // namespace
}  // namespace kubeslurm::core
