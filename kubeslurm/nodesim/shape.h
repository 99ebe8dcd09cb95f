// The simulated cluster's shape: which nodes exist, their labels, capacity and addresses. Pure.
//
// A shape comes from flags (`--nodes gpu-[001-008] --gpus 8 --cpu 64 --memory 512Gi
// --leaf-switches 2 --label k=v`) or a named shape: `NxG[-Lleaf]`, e.g. `8x8-2leaf` is eight
// nodes gpu-001..gpu-008 with eight GPUs each under two leaf switches. Node names and addresses
// are a function of the node's position only, so a restarted simulator rebuilds the same nodes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/base/status.h"

namespace kubeslurm::nodesim {

inline constexpr std::string_view kLabelHostname = "kubernetes.io/hostname";
inline constexpr std::string_view kLabelGpuProduct = "nvidia.com/gpu.product";
inline constexpr std::string_view kLabelGpuCount = "nvidia.com/gpu.count";
inline constexpr std::string_view kLabelLeaf = "kubeslurm.io/leaf";
inline constexpr std::string_view kLabelSpine = "kubeslurm.io/spine";
inline constexpr std::string_view kLabelSimulated = "nodesim.kubeslurm.io/simulated";
inline constexpr std::string_view kResourceGpu = "nvidia.com/gpu";

struct ShapeOptions {
  // A hostlist expression ("gpu-[001-008]") or a named shape ("8x8-2leaf"); empty: no nodes.
  std::string nodes;
  std::int64_t gpus = 8;
  std::string cpu = "64";
  std::string memory = "512Gi";
  std::string ephemeralStorage = "1Ti";
  std::int64_t maxPods = 110;  // the kubelet's default --max-pods
  std::int64_t leafSwitches = 1;
  std::string gpuProduct = "NVIDIA-H100-80GB-HBM3";
  std::map<std::string, std::string> extraLabels;  // --label k=v
};

struct SimNode {
  std::string name;
  std::size_t index = 0;  // position in the shape: addresses derive from it
  std::map<std::string, std::string> labels;
  api::ResourceList capacity;
  api::ResourceList allocatable;
  std::string internalIP;   // 10.128.X.Y
  std::string podCIDR;      // 10.A.B.0/24
  std::string podIPPrefix;  // "10.A.B." (pods get .2 to .254)
};

// Parses "NxG" or "NxG-Lleaf" into `options` (nodes gpu-001.., gpus, leafSwitches). Returns
// false (and leaves `options` alone) when `text` is not a named shape.
bool applyNamedShape(std::string_view text, ShapeOptions& options);

// The nodes of a shape, in order. kInvalidArgument for a bad hostlist, duplicate names, a bad
// quantity, a label that is not k=v, fewer than one leaf switch or more leaf switches than nodes.
StatusOr<std::vector<SimNode>> buildNodes(const ShapeOptions& options);

// "k=v" -> (k, v); kInvalidArgument without '=' or with an empty key.
StatusOr<std::pair<std::string, std::string>> parseLabel(std::string_view text);

}  // namespace kubeslurm::nodesim
