// topology.conf: tree (SwitchName= Switches= Nodes=) and block (BlockName= Nodes= + BlockSizes=).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "operator/base/status.h"

namespace kubeslurm::slurm {

struct TopologySwitch {
  std::string name;
  std::vector<std::string> nodes;     // expanded, as written (leaf switches)
  std::vector<std::string> children;  // expanded switch names (upper switches)
  std::uint32_t linkSpeed = 1;
};

struct TopologyBlock {
  std::string name;
  std::vector<std::string> nodes;  // expanded
};

struct TopologyConf {
  std::vector<TopologySwitch> switches;  // tree topology, in file order
  std::vector<TopologyBlock> blocks;     // block topology, in file order
  std::vector<std::uint32_t> blockSizes;  // BlockSizes=, ascending; empty = default
};

// Parses the text of topology.conf. Errors name the line: "topology.conf line 3: ...".
// Validates: unknown keys, a switch both with Nodes= and Switches= allowed as Slurm allows,
// references to undefined switches, duplicate switch names, mixing tree and block.
StatusOr<TopologyConf> parseTopologyConf(std::string_view text);

}  // namespace kubeslurm::slurm
