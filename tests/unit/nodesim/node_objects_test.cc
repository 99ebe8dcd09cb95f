#include "kubeslurm/nodesim/node_objects.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <unistd.h>

#include "kubeslurm/nodesim/control.h"

namespace kubeslurm::nodesim {
namespace {

SimNode oneNode() {
  ShapeOptions options;
  options.nodes = "2x8";
  return buildNodes(options)->back();
}

// kubelet_node_status.go: registration carries capacity/allocatable, addresses, nodeInfo and
// the four conditions; the Node decodes as Ready with 8 allocatable GPUs.
TEST(NodeObjectsTest, RegisteredNodeIsReadyWithItsGpus) {
  const SimNode node = oneNode();
  const nlohmann::json object = nodeObject(node, 1'700'000'000);
  auto decoded = api::decodeNode(object);
  ASSERT_TRUE(decoded.isOk()) << decoded.status().toString();
  EXPECT_EQ(api::nodeReadyStatus(*decoded), "True");
  EXPECT_EQ(decoded->allocatable.at("nvidia.com/gpu"), "8");
  EXPECT_EQ(decoded->metadata.labels.at("kubernetes.io/hostname"), "gpu-002");
  EXPECT_EQ(object["status"]["nodeInfo"]["kubeletVersion"], "v1.20.2");
  int pressures = 0;
  for (const auto& c : decoded->conditions) {
    if (c.type == "Ready") {
      EXPECT_EQ(c.reason, "KubeletReady");
      EXPECT_EQ(c.lastHeartbeatTime, 1'700'000'000);
    } else {
      EXPECT_EQ(c.status, "False") << c.type;
      ++pressures;
    }
  }
  EXPECT_EQ(pressures, 3);
  ASSERT_EQ(decoded->addresses.size(), 2U);
  EXPECT_EQ(decoded->addresses[0],
            (std::pair<std::string, std::string>{"InternalIP", node.internalIP}));
  // A later report keeps the Ready transition time and moves only the heartbeat.
  const nlohmann::json later = nodeStatus(node, 1'700'000'040, 1'700'000'000);
  EXPECT_EQ(later["conditions"][3]["lastHeartbeatTime"], "2023-11-14T22:14:00Z");
  EXPECT_EQ(later["conditions"][3]["lastTransitionTime"], "2023-11-14T22:13:20Z");
}

// pkg/kubelet/nodelease: holder = node, 40 s duration, owned by the Node.
TEST(NodeObjectsTest, LeaseIsHeldByTheNode) {
  const SimNode node = oneNode();
  auto lease = api::decodeLease(leaseObject(node, "uid-1", 1'700'000'000'123'456, 40));
  ASSERT_TRUE(lease.isOk()) << lease.status().toString();
  EXPECT_EQ(lease->metadata.namespaceName, "kube-node-lease");
  EXPECT_EQ(lease->holderIdentity, "gpu-002");
  EXPECT_EQ(lease->leaseDurationSeconds, 40);
  EXPECT_EQ(lease->renewTime, 1'700'000'000'123'456);
  ASSERT_EQ(lease->metadata.ownerReferences.size(), 1U);
  EXPECT_EQ(lease->metadata.ownerReferences[0].uid, "uid-1");
}

TEST(ControlTest, FailRecoverAndWatch) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("nodesim-control-" + std::to_string(::getpid())))
          .string();
  std::filesystem::remove(path);
  ControlWatcher watcher(path);
  auto first = watcher.poll();
  ASSERT_TRUE(first.has_value());
  EXPECT_TRUE(first->empty());
  EXPECT_FALSE(watcher.poll().has_value());
  ASSERT_TRUE(updateFailedNodes(path, {"gpu-003", "gpu-004"}, true).isOk());
  auto changed = watcher.poll();
  ASSERT_TRUE(changed.has_value());
  EXPECT_EQ(*changed, (std::set<std::string>{"gpu-003", "gpu-004"}));
  auto recovered = updateFailedNodes(path, {"gpu-003"}, false);
  ASSERT_TRUE(recovered.isOk());
  EXPECT_EQ(*recovered, std::set<std::string>{"gpu-004"});
  EXPECT_EQ(*readFailedNodes(path), std::set<std::string>{"gpu-004"});
  auto again = watcher.poll();
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(*again, std::set<std::string>{"gpu-004"});
  std::filesystem::remove(path);
  std::filesystem::remove(path + ".lock");
}

}  // namespace
}  // namespace kubeslurm::nodesim
