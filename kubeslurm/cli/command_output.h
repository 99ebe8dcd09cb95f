// What a command prints and how it exits, as its pure formatting functions return it; the
// command's entry point hands it to the terminal (emit() in kubeslurm/cli/cli.h).
#pragma once

#include <string>

namespace kubeslurm::cli {

struct CommandOutput {
  std::string out;
  std::string err;
  int exitCode = 0;
};

}  // namespace kubeslurm::cli
