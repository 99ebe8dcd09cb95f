// The `kubeslurm` command line: one binary, dispatched by its first argument or by the name it
// was invoked as (a symlink named `sbatch`, `scontrol`, ...). Everything a command touches
// outside its arguments comes through CliIo so that commands are testable in-process.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "operator/base/status.h"
#include "shim/command_output.h"

namespace kubeslurm::shim {

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

// argv0: the name the program was invoked as (its basename). args: everything after it.
// Returns the process exit code.
int runCli(std::string_view argv0, const std::vector<std::string>& args, CliIo& io);

// The Slurm commands this binary answers to when invoked through a symlink of that name.
const std::vector<std::string_view>& slurmCommandNames();

}  // namespace kubeslurm::shim
