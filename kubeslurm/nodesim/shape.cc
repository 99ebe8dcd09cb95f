#include "kubeslurm/nodesim/shape.h"

#include <charconv>
#include <set>
#include <utility>

#include "kubeslurm/slurm/hostlist.h"

namespace kubeslurm::nodesim {

namespace {

// Pod CIDRs are 10.244.0.0/24, 10.244.1.0/24, ... as a kubeadm cluster's flannel hands them
// out; twelve /16s (10.244 to 10.255) give room for 3,072 nodes.
constexpr std::size_t kMaxNodes = std::size_t{12} * 256;

bool parseCount(std::string_view text, std::int64_t& out) {
  if (text.empty()) return false;
  const auto* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end && out > 0;
}

}  // namespace

bool applyNamedShape(std::string_view text, ShapeOptions& options) {
  const std::size_t x = text.find('x');
  if (x == std::string_view::npos) return false;
  std::int64_t nodes = 0;
  std::int64_t gpus = 0;
  std::int64_t leaves = 1;
  std::string_view rest = text.substr(x + 1);
  const std::size_t dash = rest.find('-');
  if (dash != std::string_view::npos) {
    std::string_view leafPart = rest.substr(dash + 1);
    rest = rest.substr(0, dash);
    constexpr std::string_view kSuffix = "leaf";
    if (leafPart.size() <= kSuffix.size() ||
        leafPart.substr(leafPart.size() - kSuffix.size()) != kSuffix) {
      return false;
    }
    if (!parseCount(leafPart.substr(0, leafPart.size() - kSuffix.size()), leaves)) return false;
  }
  if (!parseCount(text.substr(0, x), nodes) || !parseCount(rest, gpus)) return false;
  if (static_cast<std::size_t>(nodes) > kMaxNodes) return false;
  const std::string last = std::to_string(nodes);
  const std::size_t width = std::max<std::size_t>(3, last.size());
  std::string first(width - 1, '0');
  first += '1';
  std::string lastPadded(width - last.size(), '0');
  lastPadded += last;
  options.nodes = nodes == 1 ? "gpu-" + first : "gpu-[" + first + "-" + lastPadded + "]";
  options.gpus = gpus;
  options.leafSwitches = leaves;
  return true;
}

StatusOr<std::pair<std::string, std::string>> parseLabel(std::string_view text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return invalidArgument("label '" + std::string(text) + "' is not KEY=VALUE");
  }
  return std::pair<std::string, std::string>{std::string(text.substr(0, eq)),
                                             std::string(text.substr(eq + 1))};
}

StatusOr<std::vector<SimNode>> buildNodes(const ShapeOptions& options) {
  std::vector<SimNode> nodes;
  if (options.nodes.empty()) return nodes;
  ShapeOptions shape = options;
  applyNamedShape(options.nodes, shape);
  auto names = slurm::expandHostlist(shape.nodes);
  if (!names.isOk()) {
    return invalidArgument(
        "--nodes '" + options.nodes +
        "' is neither a hostlist nor a shape NxG[-Lleaf]: " + names.status().message());
  }
  if (names->size() > kMaxNodes) {
    return invalidArgument("at most " + std::to_string(kMaxNodes) + " nodes");
  }
  std::set<std::string> seen;
  for (const std::string& name : *names) {
    if (!seen.insert(name).second) return invalidArgument("node '" + name + "' listed twice");
  }
  if (shape.gpus < 0) return invalidArgument("--gpus must be >= 0");
  if (shape.maxPods <= 0) return invalidArgument("--max-pods must be > 0");
  if (shape.leafSwitches < 1 || static_cast<std::size_t>(shape.leafSwitches) > names->size()) {
    return invalidArgument("--leaf-switches must be between 1 and the number of nodes");
  }
  for (const auto& [what, text] : {std::pair<const char*, const std::string&>{"cpu", shape.cpu},
                                   {"memory", shape.memory},
                                   {"ephemeral-storage", shape.ephemeralStorage}}) {
    auto q = api::parseQuantityMilli(text);
    if (!q.isOk() || *q <= 0) {
      return invalidArgument(std::string("--") + what + " '" + text + "' is not a quantity");
    }
  }

  const std::size_t count = names->size();
  const auto leaves = static_cast<std::size_t>(shape.leafSwitches);
  nodes.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    SimNode node;
    node.name = (*names)[i];
    node.index = i;
    node.labels["kubernetes.io/os"] = "linux";
    node.labels["kubernetes.io/arch"] = "amd64";
    node.labels["beta.kubernetes.io/os"] = "linux";
    node.labels["beta.kubernetes.io/arch"] = "amd64";
    node.labels[std::string(kLabelHostname)] = node.name;
    node.labels[std::string(kLabelSimulated)] = "true";
    if (shape.gpus > 0) {
      node.labels[std::string(kLabelGpuProduct)] = shape.gpuProduct;
      node.labels[std::string(kLabelGpuCount)] = std::to_string(shape.gpus);
    }
    // Contiguous, even split: node i of N sits under leaf floor(i * L / N), so a job's
    // neighbours in name order share a switch as they do on a real rack.
    node.labels[std::string(kLabelLeaf)] = "leaf" + std::to_string(i * leaves / count + 1);
    node.labels[std::string(kLabelSpine)] = "spine1";
    for (const auto& [key, value] : shape.extraLabels) node.labels[key] = value;
    node.capacity = {{"cpu", shape.cpu},
                     {"memory", shape.memory},
                     {"ephemeral-storage", shape.ephemeralStorage},
                     {"pods", std::to_string(shape.maxPods)},
                     {"hugepages-1Gi", "0"},
                     {"hugepages-2Mi", "0"}};
    if (shape.gpus > 0) node.capacity[std::string(kResourceGpu)] = std::to_string(shape.gpus);
    node.allocatable = node.capacity;
    node.internalIP = "10.128." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 2);
    node.podIPPrefix = "10." + std::to_string(244 + i / 256) + "." + std::to_string(i % 256) + ".";
    node.podCIDR = node.podIPPrefix + "0/24";
    nodes.push_back(std::move(node));
  }
  return nodes;
}

}  // namespace kubeslurm::nodesim
