// What a command prints and how it exits, as its pure formatting functions return it; the
// command's entry point hands it to the terminal (emit() in shim/cli.h).
#pragma once

#include <string>

namespace kubeslurm::shim {

struct CommandOutput {
  std::string out;
  std::string err;
  int exitCode = 0;
};

}  // namespace kubeslurm::shim
