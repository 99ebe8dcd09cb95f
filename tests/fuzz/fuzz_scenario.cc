// The YAML scenario loader of `kubeslurm plan`; small scenarios it accepts are also planned.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kubeslurm/planner/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  constexpr kubeslurm::core::Time kNow = 1795235400;  // 2026-11-21T04:30:00Z
  auto scenario = kubeslurm::planner::loadScenario(text, "fuzz.yaml", kNow, 0);
  if (!scenario.isOk()) return 0;
  const kubeslurm::core::Snapshot& snapshot = scenario->snapshot;
  if (snapshot.nodes.size() > 64 || snapshot.jobs.size() > 64) return 0;
  (void)kubeslurm::core::plan(snapshot, scenario->now, scenario->budget);
  return 0;
}
