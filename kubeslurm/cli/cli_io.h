// What a command touches outside its arguments: the process's streams, environment, files and
// clock. Every command takes a CliIo, so commands run in-process in tests; cmd/kubeslurm wires
// the real process environment in.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

#include "kubeslurm/base/status.h"
#include "kubeslurm/cli/command_output.h"

namespace kubeslurm::cli {

struct CliIo {
  std::istream& in;
  std::ostream& out;
  std::ostream& err;
  std::function<std::optional<std::string>(std::string_view)> getenv;
  std::function<StatusOr<std::string>(const std::string&)> readFile;
  std::int64_t now = 0;               // seconds since the epoch, UTC
  std::int32_t utcOffsetSeconds = 0;  // the local time zone's offset at `now`
  bool errIsTerminal = false;         // `err` is a terminal: progress lines are welcome
};

// Writes a command's output to io.out and io.err; returns its exit code.
int emit(const CommandOutput& output, CliIo& io);

}  // namespace kubeslurm::cli
