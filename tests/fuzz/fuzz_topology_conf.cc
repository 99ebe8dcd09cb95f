// Fuzzes the topology.conf parser and the tree layout. Invariants: nothing crashes; errors name
// a line; an accepted tree always has a layout whose levels follow Slurm's rule (leaves 0, an
// upper switch one above its highest child) and whose addresses end in the node's name after one
// dot per level; an accepted block file has ascending BlockSizes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <unordered_map>

#include "kubeslurm/slurm/topology_conf.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using kubeslurm::StatusOr;
using kubeslurm::slurm::TopologyConf;
using kubeslurm::slurm::TopologyLayout;

using kubeslurm::fuzz::check;

}  // namespace

// libFuzzer fixes the entry point's name.
extern "C" int LLVMFuzzerTestOneInput(  // NOLINT(readability-identifier-naming)
    const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  StatusOr<TopologyConf> conf = kubeslurm::slurm::parseTopologyConf(text);
  if (!conf.isOk()) {
    check(conf.status().message().rfind("topology.conf line ", 0) == 0);
    return 0;
  }
  check(conf->switches.empty() || conf->blocks.empty());
  for (std::size_t i = 1; i < conf->blockSizes.size(); ++i) {
    check(conf->blockSizes[i - 1] < conf->blockSizes[i]);
  }
  if (conf->switches.empty()) return 0;

  // The layout is per node, so keep it to inputs of a sane size.
  std::size_t nodes = 0;
  for (const auto& sw : conf->switches) nodes += sw.nodes.size();
  if (nodes * conf->switches.size() > 2'000'000) return 0;

  StatusOr<TopologyLayout> layout = kubeslurm::slurm::computeTopologyLayout(*conf);
  check(layout.isOk());
  check(layout->switchLevels.size() == conf->switches.size());
  std::unordered_map<std::string_view, std::uint32_t> levelOf;
  for (std::size_t i = 0; i < conf->switches.size(); ++i) {
    levelOf.emplace(conf->switches[i].name, layout->switchLevels[i]);
  }
  for (std::size_t i = 0; i < conf->switches.size(); ++i) {
    const auto& sw = conf->switches[i];
    const std::uint32_t level = layout->switchLevels[i];
    check(level <= layout->maxLevel);
    if (!sw.nodes.empty() || sw.children.empty()) {
      check(level == 0);
      continue;
    }
    std::uint32_t highest = 0;
    for (const std::string& child : sw.children) {
      check(levelOf.contains(child));
      highest = std::max(highest, levelOf[child]);
    }
    check(level == highest + 1);
  }
  for (const auto& [node, address] : layout->addresses) {
    check(address.size() > node.size());
    check(address.compare(address.size() - node.size(), node.size(), node) == 0);
    check(address[address.size() - node.size() - 1] == '.');
  }
  constexpr std::string_view kStranger = "not-a-node-\x01";
  if (!layout->addresses.contains(std::string(kStranger))) {
    check(kubeslurm::slurm::topologyAddress(*layout, kStranger) ==
          std::string(layout->maxLevel + 1, '.') + std::string(kStranger));
  }
  return 0;
}
