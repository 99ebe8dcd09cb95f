#include "shim/commands.h"

#include <ostream>

namespace kubeslurm::shim {

int runSbatch(const std::vector<std::string>& /*args*/, CliIo& io) {
  io.err << "sbatch: not built yet\n";
  return 1;
}

}  // namespace kubeslurm::shim
