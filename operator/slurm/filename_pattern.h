// sbatch --output/--error filename patterns: %j %A %a %x %N %n %t %u %%.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kubeslurm::slurm {

struct FilenamePatternValues {
  std::uint64_t jobId = 0;                       // %j
  std::optional<std::uint64_t> arrayJobId;       // %A (falls back to %j)
  std::optional<std::uint32_t> arrayTaskId;      // %a (4294967294 / "" when not an array)
  std::string jobName;                           // %x
  std::string nodeName;                          // %N (first node)
  std::uint32_t nodeId = 0;                      // %n
  std::uint32_t taskId = 0;                      // %t
  std::string userName;                          // %u
};

// Expands as Slurm does, including zero-padding width ("%4j" -> "0042") and "%%".
std::string expandFilenamePattern(std::string_view pattern, const FilenamePatternValues& values);

}  // namespace kubeslurm::slurm
