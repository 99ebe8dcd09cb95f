// `kubeslurm plan` and `kubeslurm simulate`: the capacity planner's two commands. They read
// files and write text through PlannerIo, so the CLI runs them in-process and tests without a
// process; nothing here talks to a cluster.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "kubeslurm/base/status.h"

namespace kubeslurm::planner {

struct PlannerIo {
  std::ostream& out;
  std::ostream& err;
  std::function<StatusOr<std::string>(const std::string&)> readFile;
  std::int64_t now = 0;               // seconds since the epoch, UTC
  std::int32_t utcOffsetSeconds = 0;  // the local time zone's offset at `now`
  bool errIsTerminal = false;         // `err` is a terminal: progress lines are welcome
};

// Each takes the arguments after the command's name and returns the process exit code.
int runPlan(const std::vector<std::string>& args, PlannerIo& io);
int runSimulate(const std::vector<std::string>& args, PlannerIo& io);

}  // namespace kubeslurm::planner
