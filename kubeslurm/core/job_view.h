// A pending job as placement needs it: indices instead of names, the per-node request, and
// whether any per-node filter applies (if none, the capacity index can answer for it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kubeslurm/core/cluster_state.h"

namespace kubeslurm::core {

struct JobView {
  std::uint32_t job = 0;        // index into Snapshot::jobs
  std::uint32_t partition = 0;  // index into Snapshot::partitions
  NodeRequest request;
  std::uint32_t minNodes = 1;
  std::uint32_t maxNodes = 1;
  Duration duration = kUnlimited;
  // --switches=N while it still binds: Slurm waits up to the job's wait time, counted from when
  // the job became eligible, for an allocation on at most N leaf switches, then takes any.
  std::optional<std::uint32_t> maxSwitches;
  // No -w, -x, -C, tolerations or --contiguous: every usable node of the partition is a
  // candidate, and any of them may go with any other.
  bool simple = true;
  bool contiguous = false;                   // Job::contiguous
  std::vector<NodeIndex> required;           // -w, resolved, ascending
  std::vector<NodeIndex> excluded;           // -x, resolved, ascending
  std::vector<std::string> unknownRequired;  // -w names that are not nodes
  // A job with a matching OR (Job::matchingOneOf) is one view per feature: the index of this
  // view's, which every node it takes has. -1: none.
  std::int32_t matching = -1;
};

JobView makeJobView(const ClusterState& state, std::uint32_t jobIndex, std::uint32_t partition,
                    Time now, std::int32_t matching = -1);

// Whether node n may hold a rank of the job at all (state, taints, features, -x), regardless of
// free capacity and of the main pass closing nodes.
bool nodeAllowedSlow(const ClusterState& state, const JobView& job, NodeIndex n);
// Whether `node` has the features `job` asks for (-C): each of constraints, and one of each
// constraintAnyOf clause.
bool hasJobFeatures(const Node& node, const Job& job);
// The same, and the view's matching-OR feature.
bool hasViewFeatures(const Node& node, const Job& job, const JobView& view);
inline bool nodeAllowed(const ClusterState& state, const JobView& job, NodeIndex n) {
  return job.simple ? state.usable(n) : nodeAllowedSlow(state, job, n);
}

bool isRequired(const JobView& job, NodeIndex n);

}  // namespace kubeslurm::core
