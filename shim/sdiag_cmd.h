// `sdiag` with the cluster and the query API injectable (tests; commands.h has runSdiag).
#pragma once

#include <string>
#include <vector>

#include "shim/cli.h"
#include "shim/kube_access.h"

namespace kubeslurm::shim {

int runSdiagWith(const std::vector<std::string>& args, CliIo& io, const Connector& connect,
                 const QueryConnector& queries);

}  // namespace kubeslurm::shim
