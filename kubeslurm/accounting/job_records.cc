#include "kubeslurm/accounting/job_records.h"

#include <array>
#include <string_view>

namespace kubeslurm::accounting {

int runPhase(const std::string& state) {
  static constexpr std::array<std::string_view, 4> kRunning = {"RUNNING", "SUSPENDED", "COMPLETING",
                                                               "STOPPED"};
  static constexpr std::array<std::string_view, 10> kEnded = {
      "COMPLETED", "FAILED",    "CANCELLED",     "TIMEOUT",  "NODE_FAIL",
      "PREEMPTED", "BOOT_FAIL", "OUT_OF_MEMORY", "DEADLINE", "REVOKED"};
  for (std::string_view s : kRunning) {
    if (state == s) return 1;
  }
  for (std::string_view s : kEnded) {
    if (state == s) return 2;
  }
  return 0;
}

bool recordSupersedes(const JobRecord& next, const JobRecord& stored) {
  return runPhase(next.state) >= runPhase(stored.state);
}

}  // namespace kubeslurm::accounting
