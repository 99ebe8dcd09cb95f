// topology.conf: tree (SwitchName= Switches= Nodes= LinkSpeed=, Slurm 22.05 topology/tree) and
// block (BlockName= Nodes= plus BlockSizes=, topology/block of Slurm 24.05+; see topology.conf(5)).
//
// Read as Slurm's parse_config reads it: parameter names are case-insensitive, values are not;
// '#' starts a comment unless escaped ("\#"); a line ending in an odd number of backslashes
// continues on the next; values may be double-quoted; one SwitchName/BlockName record per line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kubeslurm/base/status.h"

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
  std::vector<TopologySwitch> switches;   // tree topology, in file order
  std::vector<TopologyBlock> blocks;      // block topology, in file order
  std::vector<std::uint32_t> blockSizes;  // BlockSizes=, ascending; empty = default
};

// Parses the text of topology.conf. Errors name the line: "topology.conf line 3: ...", with
// Slurm's wording where Slurm has one. Rejected as Slurm rejects them (it refuses to start):
// unknown parameters, a switch with both or neither of Nodes= and Switches=, a block without
// Nodes=, duplicate switch or block names, a child switch that is not defined (or is the switch
// itself), a switch graph that is not a tree (a cycle, or more than Slurm's 21 levels), bad
// hostlists, bad LinkSpeed or BlockSizes values, a block smaller than the base block size.
// More than 2^22 node and switch names in all is kResourceExhausted.
// Mixing tree and block records in one file is an error too (each plugin knows only its own).
StatusOr<TopologyConf> parseTopologyConf(std::string_view text);

// What topology/tree derives from the switches: each switch's level and each node's address.
struct TopologyLayout {
  std::vector<std::uint32_t> switchLevels;  // aligned with TopologyConf::switches; leaves are 0
  std::uint32_t maxLevel = 0;
  // SLURM_TOPOLOGY_ADDR_PATTERN, the same for every node: "switch." per level, then "node"
  // ("switch.switch.node" for a leaf/spine tree); just "node" when there are no switches.
  std::string pattern = "node";
  // SLURM_TOPOLOGY_ADDR of every node under a leaf switch, e.g. "spine.leaf1.gpu-node-001".
  std::unordered_map<std::string, std::string> addresses;
};

// Levels as Slurm computes them (a leaf is 0, a switch 1 + its highest child) and addresses as
// its topo_get_node_addr() writes them: from the top level down, the switches of that level
// that reach the node (compressed as a hostlist when there are several), each followed by '.'.
// Validates the switch graph as parseTopologyConf does, so it also takes hand-built confs.
StatusOr<TopologyLayout> computeTopologyLayout(const TopologyConf& conf);

// The address of a node Slurm knows but no switch reaches: an empty name per level
// ("..gpu-node-009" on a two-level tree); the node name alone without switches.
std::string topologyAddress(const TopologyLayout& layout, std::string_view node);

}  // namespace kubeslurm::slurm
