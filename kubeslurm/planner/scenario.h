// What-if scenarios for `kubeslurm plan`: a YAML file that declares a cluster (nodes, topology,
// partitions, accounts and their limits, QOS), what runs on it now, and what waits, loaded into
// a core::Snapshot. docs/plan-and-simulate.md documents the format; deploy/examples/scenario.yaml
// and deploy/examples/scenario-limits.yaml are examples.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/base/status.h"
#include "kubeslurm/core/model.h"

namespace kubeslurm::planner {

struct Scenario {
  core::Snapshot snapshot;
  core::Time now = 0;
  core::Budget budget;
  std::vector<core::JobId> pendingOrder;  // the pending jobs, in the order the file lists them
};

// `sourceName` prefixes errors, which name the place and the key:
//   "scenario.yaml:12:7: pending[2].timeLimit: invalid time limit \"abc\"".
// `defaultNow` is used when the file has no `now`; timestamps in the file are local time at
// `utcOffsetSeconds`, as Slurm reads them.
StatusOr<Scenario> loadScenario(std::string_view yaml, std::string_view sourceName,
                                core::Time defaultNow, std::int32_t utcOffsetSeconds);

// Kubernetes quantities for memory: "512Gi", "500G", "512000Mi", "1.5Ti", "1073741824" (bytes).
// Binary suffixes Ki Mi Gi Ti Pi Ei; decimal k M G T P E, as the kubelet reports allocatable.
StatusOr<std::uint64_t> parseMemoryQuantity(std::string_view text);

}  // namespace kubeslurm::planner
