// `sinfo` as Slurm 22.05 prints it, as a pure function of the Partitions, the Nodes and the
// pods bound to them, the options and `now`: no I/O, no clock. sinfo_cmd.cc lists the objects.
//
// Sources of truth (Slurm 22.05.8): src/sinfo/opts.c (options, the default formats of plain,
// -N, -l, -R and -s), src/sinfo/print.c (_print_str's width and truncation, each field, the
// partition and node-list widths computed from the data, MIN_PART_FIELD_SIZE = 9),
// src/sinfo/sort.c (default sort "#P,-t", "N" with -N), and the reference outputs in
// ../shared/reference/slurm-22.05.md ("sinfo and squeue on an empty cluster").
//
// The model (docs/cli.md "sinfo"):
//  - A partition's nodes are those its spec.nodes hostlist names and its spec.nodeSelector
//    matches (both when both are given), as the operator's snapshot builds them.
//  - Partition order is slurm.conf's order in Slurm; ours has none, so the default partition
//    comes first, then the others by name.
//  - A node's state: down (Ready condition not True; shown "down*", not responding), else
//    drain/drng when cordoned (spec.unschedulable; drng while anything runs there), else
//    alloc when all its GPUs are requested (or all its CPUs, on a node without GPUs), mix when
//    some are, idle when none. Every non-terminal pod bound to the node counts, ours or not:
//    an inference server uses GPUs our jobs cannot have, so the node is mix/alloc for Slurm
//    users too.
//  - The reason of a node (sinfo -R, scontrol show node): the annotation
//    kubeslurm.io/reason when set; else for a down node "Not responding" (slurmctld's reason
//    for an unreachable slurmd) and for a cordoned one "Cordoned". Its time is the Ready
//    condition's lastTransitionTime for a down node, else the annotation
//    kubeslurm.io/reason-time (RFC 3339); its user the annotation kubeslurm.io/reason-user,
//    else "root" (who slurmctld names for its own actions).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/cli/command_output.h"
#include "kubeslurm/slurm/time_format.h"

namespace kubeslurm::cli {

inline constexpr std::string_view kNodeReasonAnnotation = "kubeslurm.io/reason";
inline constexpr std::string_view kNodeReasonUserAnnotation = "kubeslurm.io/reason-user";
inline constexpr std::string_view kNodeReasonTimeAnnotation = "kubeslurm.io/reason-time";

enum class NodeBaseState { kIdle, kMixed, kAllocated, kDown };

// What sinfo and scontrol show node know of one node.
struct NodeFacts {
  std::string name;
  NodeBaseState base = NodeBaseState::kIdle;
  bool drain = false;          // cordoned
  bool notResponding = false;  // the kubelet stopped reporting
  std::int64_t cpus = 0;       // allocatable, whole CPUs
  std::int64_t allocCpus = 0;  // requested by bound pods, rounded up
  std::int64_t gpus = 0;
  std::int64_t allocGpus = 0;
  std::int64_t memoryMb = 0;  // allocatable
  std::int64_t allocMemoryMb = 0;
  std::string features;  // the kubeslurm.io/features label, "(null)"-free: "" when none
  std::string reason;    // "" when none
  std::string reasonUser;
  std::optional<slurm::EpochSeconds> reasonTime;
  std::optional<slurm::EpochSeconds> bootTime;  // metadata.creationTimestamp
};

// The node with the requests of the pods bound to it (any namespace; terminal ones are free).
NodeFacts nodeFacts(const api::Node& node, const std::vector<api::Pod>& boundPods);

// Slurm's compact state ("idle", "mix", "alloc", "drain", "drng", "down*"), upper case as
// scontrol prints it with `upper` ("IDLE", "MIXED", "IDLE+DRAIN", "DOWN+NOT_RESPONDING").
std::string nodeStateCompact(const NodeFacts& node);
std::string nodeStateLong(const NodeFacts& node);  // sinfo %T: "idle", "mixed", "drained"...
std::string nodeStateScontrol(const NodeFacts& node);

// The nodes of a partition, in `nodes`' order.
std::vector<std::string> partitionNodeNames(const api::PartitionSpec& spec,
                                            const std::vector<api::Node>& nodes);

// Partitions in the order sinfo and scontrol list them: default first, then by name.
std::vector<const api::Partition*> orderedPartitions(const std::vector<api::Partition>& all);

struct SinfoOptions {
  std::optional<std::string> format;    // -o
  bool noHeader = false;                // -h
  bool nodeOriented = false;            // -N
  bool longOutput = false;              // -l
  bool listReasons = false;             // -R
  bool summarize = false;               // -s
  bool exact = false;                   // -e (our rows are already exact)
  std::vector<std::string> partitions;  // -p
  std::vector<std::string> states;      // -t, lower case
  std::vector<std::string> nodes;       // -n, expanded
  bool responding = false;              // -r
  bool dead = false;                    // -d
};

struct SinfoParse {
  SinfoOptions options;
  std::optional<CommandOutput> exit;
};
SinfoParse parseSinfoArgs(const std::vector<std::string>& args);

struct SinfoContext {
  slurm::EpochSeconds now = 0;
  std::int32_t utcOffsetSeconds = 0;
};

// `nodes` in the natural order of their names; `facts` one per node, same order.
CommandOutput formatSinfo(const std::vector<api::Partition>& partitions,
                          const std::vector<api::Node>& nodes, const std::vector<NodeFacts>& facts,
                          const SinfoOptions& options, const SinfoContext& context);

}  // namespace kubeslurm::cli
