// Job array specifications (sbatch --array): "0-999", "1,3,5-9", "0-15:4", "%N" throttle.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "operator/base/status.h"

namespace kubeslurm::slurm {

// Slurm's default MaxArraySize: task ids must be below it.
inline constexpr std::uint32_t kDefaultMaxArraySize = 1001;

struct ArraySpec {
  std::vector<std::uint32_t> taskIds;     // ascending, unique
  std::optional<std::uint32_t> maxRunning;  // the %N throttle
  friend bool operator==(const ArraySpec&, const ArraySpec&) = default;
};

// Error message is what Slurm prints after "sbatch: error: " (e.g. "Invalid job array
// specification").
StatusOr<ArraySpec> parseArraySpec(std::string_view text,
                                   std::uint32_t maxArraySize = kDefaultMaxArraySize);

// Compact form as squeue prints pending tasks: "2-7%2", "1,3,5-9", "0-12:4".
std::string formatArrayTasks(const std::vector<std::uint32_t>& taskIds,
                             std::optional<std::uint32_t> maxRunning);

}  // namespace kubeslurm::slurm
