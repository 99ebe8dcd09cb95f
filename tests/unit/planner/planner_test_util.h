// An in-memory PlannerIo for running the planner's commands in tests: files from a map, output
// to strings.
#pragma once

#include <cstdint>
#include <map>
#include <sstream>
#include <string>

#include "kubeslurm/planner/planner.h"

namespace kubeslurm::planner::testing {

class FakePlanner {
 public:
  FakePlanner()
      : io_{out_,
            err_,
            [this](const std::string& path) -> StatusOr<std::string> {
              const auto it = files.find(path);
              if (it == files.end()) return notFound("Unable to open file " + path);
              return it->second;
            },
            kNow,
            0,
            false} {}

  // 2026-11-21T04:30:00Z
  static constexpr std::int64_t kNow = 1795235400;

  std::map<std::string, std::string> files;
  PlannerIo& io() { return io_; }
  std::string out() const { return out_.str(); }
  std::string err() const { return err_.str(); }

 private:
  std::ostringstream out_;
  std::ostringstream err_;
  PlannerIo io_;
};

}  // namespace kubeslurm::planner::testing
