#include "shim/commands.h"

#include <ostream>

namespace kubeslurm::shim {

int runScontrol(const std::vector<std::string>& /*args*/, CliIo& io) {
  io.err << "scontrol: not built yet\n";
  return 1;
}

}  // namespace kubeslurm::shim
