#include "kubeslurm/nodesim/shape.h"

#include <set>

#include <gtest/gtest.h>

namespace kubeslurm::nodesim {
namespace {

TEST(ShapeTest, NamedShapeGivesNodesGpusAndEvenLeafSplit) {
  ShapeOptions options;
  options.nodes = "8x8-2leaf";
  auto nodes = buildNodes(options);
  ASSERT_TRUE(nodes.isOk()) << nodes.status().toString();
  ASSERT_EQ(nodes->size(), 8U);
  EXPECT_EQ(nodes->front().name, "gpu-001");
  EXPECT_EQ(nodes->back().name, "gpu-008");
  for (std::size_t i = 0; i < 8; ++i) {
    const SimNode& n = (*nodes)[i];
    EXPECT_EQ(n.labels.at("kubeslurm.io/leaf"), i < 4 ? "leaf1" : "leaf2") << n.name;
    EXPECT_EQ(n.labels.at("kubeslurm.io/spine"), "spine1");
    EXPECT_EQ(n.labels.at("kubernetes.io/hostname"), n.name);
    EXPECT_EQ(n.labels.at("nvidia.com/gpu.product"), "NVIDIA-H100-80GB-HBM3");
    EXPECT_EQ(n.labels.at("nvidia.com/gpu.count"), "8");
    EXPECT_EQ(n.allocatable.at("nvidia.com/gpu"), "8");
    EXPECT_EQ(n.allocatable.at("pods"), "110");
    EXPECT_EQ(n.capacity, n.allocatable);
  }
}

TEST(ShapeTest, NamedShapesWithoutLeavesAndWideCounts) {
  ShapeOptions options;
  ASSERT_TRUE(applyNamedShape("4x8", options));
  EXPECT_EQ(options.nodes, "gpu-[001-004]");
  EXPECT_EQ(options.leafSwitches, 1);
  ASSERT_TRUE(applyNamedShape("1200x4-3leaf", options));
  EXPECT_EQ(options.nodes, "gpu-[0001-1200]");
  EXPECT_EQ(options.gpus, 4);
  EXPECT_EQ(options.leafSwitches, 3);
  for (const char* bad : {"gpu-[001-004]", "x8", "4x", "4x8-leaf", "4x8-2leafs", "0x8"}) {
    ShapeOptions untouched;
    EXPECT_FALSE(applyNamedShape(bad, untouched)) << bad;
    EXPECT_TRUE(untouched.nodes.empty());
  }
}

TEST(ShapeTest, HostlistFlagsAndExtraLabels) {
  ShapeOptions options;
  options.nodes = "dgx-[01-03],spare";
  options.gpus = 4;
  options.cpu = "96";
  options.memory = "1Ti";
  options.leafSwitches = 2;
  options.extraLabels = {{"pool", "train"}};
  auto nodes = buildNodes(options);
  ASSERT_TRUE(nodes.isOk()) << nodes.status().toString();
  ASSERT_EQ(nodes->size(), 4U);
  EXPECT_EQ((*nodes)[3].name, "spare");
  EXPECT_EQ((*nodes)[0].capacity.at("cpu"), "96");
  EXPECT_EQ((*nodes)[0].capacity.at("memory"), "1Ti");
  EXPECT_EQ((*nodes)[0].labels.at("pool"), "train");
  EXPECT_EQ((*nodes)[1].labels.at("kubeslurm.io/leaf"), "leaf1");
  EXPECT_EQ((*nodes)[2].labels.at("kubeslurm.io/leaf"), "leaf2");
}

TEST(ShapeTest, AddressesAreUniqueAcrossThousandsOfNodes) {
  ShapeOptions options;
  options.nodes = "3000x8";
  auto nodes = buildNodes(options);
  ASSERT_TRUE(nodes.isOk()) << nodes.status().toString();
  std::set<std::string> ips;
  std::set<std::string> cidrs;
  for (const SimNode& n : *nodes) {
    EXPECT_TRUE(ips.insert(n.internalIP).second) << n.internalIP;
    EXPECT_TRUE(cidrs.insert(n.podCIDR).second) << n.podCIDR;
  }
  EXPECT_EQ(nodes->front().podCIDR, "10.244.0.0/24");
  EXPECT_EQ((*nodes)[256].podCIDR, "10.245.0.0/24");
}

TEST(ShapeTest, BadInputIsRefused) {
  ShapeOptions options;
  options.nodes = "n[5-3]";
  EXPECT_EQ(buildNodes(options).status().code(), StatusCode::kInvalidArgument);
  options.nodes = "a,a";
  EXPECT_EQ(buildNodes(options).status().code(), StatusCode::kInvalidArgument);
  options.nodes = "2x8-3leaf";
  EXPECT_EQ(buildNodes(options).status().code(), StatusCode::kInvalidArgument);
  options.nodes = "2x8";
  options.memory = "lots";
  EXPECT_EQ(buildNodes(options).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(parseLabel("novalue").isOk());
  EXPECT_FALSE(parseLabel("=v").isOk());
  EXPECT_EQ(parseLabel("a=b=c")->second, "b=c");
  ShapeOptions empty;
  EXPECT_TRUE(buildNodes(empty)->empty());
}

}  // namespace
}  // namespace kubeslurm::nodesim
