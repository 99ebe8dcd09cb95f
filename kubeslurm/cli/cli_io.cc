#include "kubeslurm/cli/cli_io.h"

#include <ostream>

namespace kubeslurm::cli {

int emit(const CommandOutput& output, CliIo& io) {
  io.out << output.out;
  io.err << output.err;
  return output.exitCode;
}

}  // namespace kubeslurm::cli
