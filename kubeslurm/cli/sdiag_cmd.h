// `sdiag` with the cluster and the query API injectable (tests; commands.h has runSdiag).
#pragma once

#include <string>
#include <vector>

#include "kubeslurm/cli/cli_io.h"
#include "kubeslurm/cli/kube_access.h"

namespace kubeslurm::cli {

int runSdiagWith(const std::vector<std::string>& args, CliIo& io, const Connector& connect,
                 const QueryConnector& queries);

}  // namespace kubeslurm::cli
