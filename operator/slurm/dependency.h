// Dependency expressions (sbatch --dependency): afterok:ID[:ID][+time], "," = all, "?" = any.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "operator/base/status.h"

namespace kubeslurm::slurm {

enum class DependencyType { kAfter, kAfterAny, kAfterOk, kAfterNotOk, kAfterCorr, kSingleton };

std::string_view dependencyTypeName(DependencyType type);  // "afterok"

struct DependencyTarget {
  std::uint64_t jobId = 0;
  // nullopt: the whole job (or whole array); -1 below means "ID_*"; otherwise the task id.
  std::optional<std::int64_t> arrayTask;
  std::uint32_t delayMinutes = 0;  // "+time" for after/afterany/afterok/afternotok
  friend bool operator==(const DependencyTarget&, const DependencyTarget&) = default;
};
inline constexpr std::int64_t kAllArrayTasks = -1;

struct DependencyTerm {
  DependencyType type = DependencyType::kAfterOk;
  std::vector<DependencyTarget> targets;  // empty for singleton
  friend bool operator==(const DependencyTerm&, const DependencyTerm&) = default;
};

struct DependencySpec {
  std::vector<DependencyTerm> terms;
  bool anyOf = false;  // terms joined by '?' (any) instead of ',' (all)
  friend bool operator==(const DependencySpec&, const DependencySpec&) = default;
};

// Error message is what Slurm prints after "sbatch: error: ".
StatusOr<DependencySpec> parseDependency(std::string_view text);

// Canonical text as scontrol/squeue show it, without the (unfulfilled) status suffix:
// "afterok:9", "afterok:5_*", "afterany:3+10", "singleton".
std::string formatDependency(const DependencySpec& spec);

}  // namespace kubeslurm::slurm
