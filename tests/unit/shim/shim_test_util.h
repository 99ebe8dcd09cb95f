// An in-memory CliIo for running commands in tests: files from a map, streams to strings.
#pragma once

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "shim/cli.h"

namespace kubeslurm::shim::testing {

class FakeCli {
 public:
  FakeCli()
      : io_{in_,
            out_,
            err_,
            [](std::string_view) -> std::optional<std::string> { return std::nullopt; },
            [this](const std::string& path) -> StatusOr<std::string> {
              const auto it = files.find(path);
              if (it == files.end()) return notFound("Unable to open file " + path);
              return it->second;
            },
            kNow,
            0} {}

  // 2026-11-21T04:30:00Z
  static constexpr std::int64_t kNow = 1795235400;

  std::map<std::string, std::string> files;
  CliIo& io() { return io_; }
  std::string out() const { return out_.str(); }
  std::string err() const { return err_.str(); }

 private:
  std::istringstream in_;
  std::ostringstream out_;
  std::ostringstream err_;
  CliIo io_;
};

}  // namespace kubeslurm::shim::testing
