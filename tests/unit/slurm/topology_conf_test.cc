// topology.conf parsing and the tree layout (switch levels, SLURM_TOPOLOGY_ADDR), pinned to
// ../shared/reference/slurm-22.05.md ("Goal C", the topology.conf behind it, and the batch
// environment) and to topology.conf(5) for topology/block.
#include "kubeslurm/slurm/topology_conf.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kubeslurm::slurm {
namespace {

using Names = std::vector<std::string>;

// The reference cluster's topology.conf.
constexpr std::string_view kReference =
    "SwitchName=leaf1 Nodes=gpu-node-[001-004]\n"
    "SwitchName=leaf2 Nodes=gpu-node-[005-008]\n"
    "SwitchName=spine Switches=leaf[1-2]\n";

TopologyConf parseOk(std::string_view text) {
  StatusOr<TopologyConf> conf = parseTopologyConf(text);
  EXPECT_TRUE(conf.isOk()) << conf.status().toString();
  return conf.isOk() ? *conf : TopologyConf{};
}

TEST(TopologyConfTest, ParsesTheReferenceTree) {
  const TopologyConf conf = parseOk(kReference);
  ASSERT_EQ(conf.switches.size(), 3u);
  EXPECT_EQ(conf.switches[0].name, "leaf1");
  EXPECT_EQ(conf.switches[0].nodes,
            (Names{"gpu-node-001", "gpu-node-002", "gpu-node-003", "gpu-node-004"}));
  EXPECT_TRUE(conf.switches[0].children.empty());
  EXPECT_EQ(conf.switches[2].name, "spine");
  EXPECT_EQ(conf.switches[2].children, (Names{"leaf1", "leaf2"}));
  // `scontrol show topology` shows LinkSpeed=1 where none is configured.
  EXPECT_EQ(conf.switches[2].linkSpeed, 1u);
  EXPECT_TRUE(conf.blocks.empty());
}

TEST(TopologyConfTest, LayoutGivesLevelsAndTopologyAddresses) {
  // scontrol show topology: leaf1/leaf2 Level=0, spine Level=1;
  // the batch step: SLURM_TOPOLOGY_ADDR=spine.leaf1.gpu-node-001,
  // SLURM_TOPOLOGY_ADDR_PATTERN=switch.switch.node
  StatusOr<TopologyLayout> layout = computeTopologyLayout(parseOk(kReference));
  ASSERT_TRUE(layout.isOk()) << layout.status().toString();
  EXPECT_EQ(layout->switchLevels, (std::vector<std::uint32_t>{0, 0, 1}));
  EXPECT_EQ(layout->maxLevel, 1u);
  EXPECT_EQ(layout->pattern, "switch.switch.node");
  EXPECT_EQ(topologyAddress(*layout, "gpu-node-001"), "spine.leaf1.gpu-node-001");
  EXPECT_EQ(topologyAddress(*layout, "gpu-node-008"), "spine.leaf2.gpu-node-008");
  EXPECT_EQ(layout->addresses.size(), 8u);
  // A node no switch reaches: an empty name per level.
  EXPECT_EQ(topologyAddress(*layout, "gpu-node-009"), "..gpu-node-009");
}

TEST(TopologyConfTest, LayoutOfThreeLevelsSkipsLevelsANodeIsNotUnder) {
  // Level = 1 + the highest child; a leaf hung directly off the core has no level-1 switch.
  const TopologyConf conf = parseOk(
      "SwitchName=l1 Nodes=n[1-2]\n"
      "SwitchName=l2 Nodes=n[3-4]\n"
      "SwitchName=l3 Nodes=n[5-6]\n"
      "SwitchName=pod Switches=l[1-2]\n"
      "SwitchName=core Switches=pod,l3\n");
  StatusOr<TopologyLayout> layout = computeTopologyLayout(conf);
  ASSERT_TRUE(layout.isOk());
  EXPECT_EQ(layout->switchLevels, (std::vector<std::uint32_t>{0, 0, 0, 1, 2}));
  EXPECT_EQ(layout->pattern, "switch.switch.switch.node");
  EXPECT_EQ(topologyAddress(*layout, "n1"), "core.pod.l1.n1");
  EXPECT_EQ(topologyAddress(*layout, "n5"), "core..l3.n5");
}

TEST(TopologyConfTest, NodeOnTwoLeavesGetsBothInOneHostlist) {
  // topo_get_node_addr() compresses the switches of a level with the hostlist code.
  StatusOr<TopologyLayout> layout = computeTopologyLayout(
      parseOk("SwitchName=leaf1 Nodes=n[1-2]\nSwitchName=leaf2 Nodes=n[2-3]\nSwitchName=top "
              "Switches=leaf[1-2]\n"));
  ASSERT_TRUE(layout.isOk());
  EXPECT_EQ(topologyAddress(*layout, "n2"), "top.leaf[1-2].n2");
}

TEST(TopologyConfTest, NoSwitchesMeansPatternNode) {
  StatusOr<TopologyLayout> layout = computeTopologyLayout(TopologyConf{});
  ASSERT_TRUE(layout.isOk());
  EXPECT_EQ(layout->pattern, "node");
  EXPECT_EQ(topologyAddress(*layout, "gpu-node-001"), "gpu-node-001");
}

TEST(TopologyConfTest, FollowsSlurmsLineSyntax) {
  // Parameter names are case-insensitive; '#' comments; "\" continues a line; quoted values;
  // spaces around '='; blank and comment-only lines.
  const TopologyConf conf = parseOk(
      "# fabric\n"
      "\n"
      "switchname=s0 nodes=dev[0-1]   # leaf\n"
      "SWITCHNAME = s1 \\\n"
      "   NODES=\"dev[2-3]\" LinkSpeed=0x10\n"
      "  \t\n"
      "SwitchName=s2 Switches=s[0-1] linkspeed=2k\n");
  ASSERT_EQ(conf.switches.size(), 3u);
  EXPECT_EQ(conf.switches[1].name, "s1");
  EXPECT_EQ(conf.switches[1].nodes, (Names{"dev2", "dev3"}));
  EXPECT_EQ(conf.switches[1].linkSpeed, 16u);
  EXPECT_EQ(conf.switches[2].linkSpeed, 2048u);
  EXPECT_EQ(conf.switches[2].children, (Names{"s0", "s1"}));
}

TEST(TopologyConfTest, EscapedHashIsNotAComment) {
  const TopologyConf conf = parseOk("SwitchName=a\\#1 Nodes=n1\n");
  ASSERT_EQ(conf.switches.size(), 1u);
  EXPECT_EQ(conf.switches[0].name, "a#1");
}

TEST(TopologyConfTest, EmptyFileHasNoTopology) {
  const TopologyConf conf = parseOk("# nothing here\n\n");
  EXPECT_TRUE(conf.switches.empty());
  EXPECT_TRUE(conf.blocks.empty());
}

struct BadConf {
  std::string text;
  std::string error;
};

class TopologyConfErrorTest : public ::testing::TestWithParam<BadConf> {};

TEST_P(TopologyConfErrorTest, RejectsNamingTheLine) {
  StatusOr<TopologyConf> conf = parseTopologyConf(GetParam().text);
  ASSERT_FALSE(conf.isOk()) << GetParam().text;
  EXPECT_EQ(conf.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(conf.status().message(), GetParam().error);
}

// Messages follow Slurm's own (topology_tree.c, parse_config.c, the block plugin).
INSTANTIATE_TEST_SUITE_P(
    Slurm, TopologyConfErrorTest,
    ::testing::Values(
        BadConf{"SwitchName=s1 Nodes=n1\nSwitchName=s2 Nodes=n2 Speed=3\n",
                "topology.conf line 2: Parsing error at unrecognized key: Speed"},
        BadConf{"Nodes=n1\n", "topology.conf line 1: Parsing error at unrecognized key: Nodes"},
        BadConf{"SwitchName=s1 Nodes=n1 garbage\n",
                "topology.conf line 1: Parse error: \" garbage\""},
        BadConf{"# c\nSwitchName=s1 Nodes=n1 Switches=s2\n",
                "topology.conf line 2: switch s1 has both child switches and nodes"},
        BadConf{"SwitchName=s1 LinkSpeed=10\n",
                "topology.conf line 1: switch s1 has neither child switches nor nodes"},
        BadConf{"SwitchName=s1 Nodes=n1 LinkSpeed=fast\n",
                "topology.conf line 1: LinkSpeed value (fast) is not a valid number"},
        BadConf{"SwitchName=s1 Nodes=n1 LinkSpeed=-1\n",
                "topology.conf line 1: LinkSpeed value (-1) is less than zero"},
        BadConf{"SwitchName=s1 Nodes=n1 LinkSpeed=4294967296\n",
                "topology.conf line 1: LinkSpeed value (4294967296) is greater than 4294967295"},
        BadConf{"SwitchName=s1 Nodes=n1\nSwitchName=s1 Nodes=n2\n",
                "topology.conf line 2: Switch (s1) has already been defined"},
        BadConf{"SwitchName=leaf1 Nodes=n1\nSwitchName=spine Switches=leaf[1-2]\n",
                "topology.conf line 2: Switch configuration spine has invalid child (leaf2)"},
        BadConf{"SwitchName=leaf Nodes=n1\nSwitchName=s1 Switches=s1,leaf\n",
                "topology.conf line 2: Switch configuration s1 has invalid child (s1)"},
        // A cycle never resolves: Slurm gives up after its passes.
        BadConf{"SwitchName=leaf Nodes=n1\nSwitchName=a Switches=b,leaf\nSwitchName=b "
                "Switches=a\n",
                "topology.conf line 2: Switch configuration is not a tree"},
        BadConf{"SwitchName=s1 Nodes=n[5-3]\n",
                "topology.conf line 1: Invalid node name (n[5-3]) in switch config (s1)"},
        BadConf{"SwitchName=s1 Nodes=n1\nSwitchName=s2 Switches=s[1-2]x\n",
                "topology.conf line 2: Invalid switches: s[1-2]x"},
        BadConf{"SwitchName=s1 Nodes=n1\nBlockName=b1 Nodes=n[1-4]\n",
                "topology.conf line 2: BlockName cannot be mixed with SwitchName records (line 1): "
                "topology/tree and topology/block are different plugins"},
        BadConf{"BlockSizes=4\nSwitchName=s1 Nodes=n1\n",
                "topology.conf line 2: SwitchName cannot be mixed with BlockName records (line 1): "
                "topology/tree and topology/block are different plugins"},
        BadConf{"BlockName=b1\n", "topology.conf line 1: block b1 hasn't got nodes"},
        BadConf{"BlockName=b1 Nodes=n[1-4]\nBlockName=b1 Nodes=n[5-8]\n",
                "topology.conf line 2: Block (b1) has already been defined"},
        BadConf{"BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[5-7]\n",
                "topology.conf line 2: Block configuration (b2) children count lower than "
                "bblock_node_cnt"},
        BadConf{"BlockName=b1 Nodes=n[1-4]\nBlockSizes=4,12\n",
                "topology.conf line 2: Invalid BlockSizes value: 12"},
        BadConf{"BlockName=b1 Nodes=n[1-4]\nBlockSizes=0\n",
                "topology.conf line 2: Invalid BlockSizes value: 0"},
        BadConf{"BlockName=b1 Nodes=n[1-4]\nBlockSizes=8\n",
                "topology.conf line 1: Block configuration (b1) children count lower than "
                "bblock_node_cnt"}));

TEST(TopologyConfTest, ParsesBlocksAndBlockSizes) {
  // topology.conf(5)'s example for topology/block.
  const TopologyConf conf = parseOk(
      "BlockName=block1 Nodes=node[1-32]\n"
      "BlockName=block2 Nodes=node[33-64]\n"
      "BlockName=block3 Nodes=node[65-96]\n"
      "BlockName=block4 Nodes=node[97-128]\n"
      "BlockSizes=30,120\n");
  ASSERT_EQ(conf.blocks.size(), 4u);
  EXPECT_EQ(conf.blocks[3].name, "block4");
  EXPECT_EQ(conf.blocks[3].nodes.size(), 32u);
  EXPECT_EQ(conf.blocks[3].nodes.front(), "node97");
  EXPECT_EQ(conf.blockSizes, (std::vector<std::uint32_t>{30, 120}));
  EXPECT_TRUE(conf.switches.empty());
}

TEST(TopologyConfTest, BlockSizesAreSortedAndDefaultEmpty) {
  EXPECT_EQ(parseOk("BlockName=b Nodes=n[1-4]\nBlockSizes=4,16,8\n").blockSizes,
            (std::vector<std::uint32_t>{4, 8, 16}));
  EXPECT_TRUE(parseOk("BlockName=b Nodes=n[1-4]\n").blockSizes.empty());
}

TEST(TopologyConfTest, LayoutValidatesHandBuiltConfs) {
  TopologyConf conf;
  conf.switches.push_back({"leaf", {"n1"}, {}, 1});
  conf.switches.push_back({"top", {}, {"nope"}, 1});
  StatusOr<TopologyLayout> layout = computeTopologyLayout(conf);
  ASSERT_FALSE(layout.isOk());
  EXPECT_EQ(layout.status().message(), "Switch configuration top has invalid child (nope)");
}

TEST(TopologyConfTest, DeepChainsBeyondSlurmsPassesAreNotATree) {
  // Written top-down, each pass resolves one more level; Slurm stops after 21 passes.
  auto chain = [](int depth) {
    std::string text;
    for (int i = depth; i > 0; --i) {
      text += "SwitchName=s" + std::to_string(i) + " Switches=s" + std::to_string(i - 1) + "\n";
    }
    return text + "SwitchName=s0 Nodes=n1\n";
  };
  EXPECT_TRUE(parseTopologyConf(chain(20)).isOk());
  EXPECT_FALSE(parseTopologyConf(chain(22)).isOk());
}

}  // namespace
}  // namespace kubeslurm::slurm
