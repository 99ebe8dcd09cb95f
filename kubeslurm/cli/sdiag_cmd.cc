// `sdiag`: the scheduler's statistics from the operator's query API (GetStatistics;
// scheduler_access.h finds it), printed through sdiag_format.h.
#include "kubeslurm/cli/sdiag_cmd.h"

#include <ostream>

#include "kubeslurm/cli/commands.h"
#include "kubeslurm/cli/scheduler_access.h"
#include "kubeslurm/cli/sdiag_format.h"

namespace kubeslurm::cli {

int runSdiagWith(const std::vector<std::string>& args, CliIo& io, const Connector& connect,
                 const QueryConnector& queries) {
  // Our flags come out first, so that sdiag's parser never sees them.
  std::vector<std::string> rest = args;
  auto kubeFlags = takeKubeFlags(rest, /*allowAllNamespaces=*/false);
  auto schedulerFlags = takeSchedulerFlags(rest);
  if (!kubeFlags.isOk() || !schedulerFlags.isOk()) {
    io.err << "sdiag: error: "
           << (kubeFlags.isOk() ? schedulerFlags.status() : kubeFlags.status()).message() << "\n";
    return 1;
  }
  const SdiagParse parse = parseSdiagArgs(rest);
  if (parse.exit) {
    return emit(*parse.exit, io);
  }
  auto session = connect(*kubeFlags, io);
  if (!session.isOk()) {
    io.err << "sdiag: error: " << describeQueryFailure(session.status()) << "\n";
    return 1;
  }
  auto client = queries(*session, *schedulerFlags, io);
  if (!client.isOk()) {
    io.err << "sdiag: error: " << describeQueryFailure(client.status()) << "\n";
    return 1;
  }
  auto answer = (*client)->statistics();
  if (!answer.isOk()) {
    // sdiag.c: slurm_perror("slurm_get_statistics"), and the call's code as the exit status
    // (SLURM_ERROR, which exit() turns into 255; 1 here, as our other commands fail).
    io.err << "slurm_get_statistics: " << describeQueryFailure(answer.status()) << "\n";
    return 1;
  }
  SdiagContext context;
  context.now = io.now;
  context.utcOffsetSeconds = io.utcOffsetSeconds;
  context.planTime = answer->planTime;
  io.out << formatSdiag(answer->statistics, context);
  return 0;
}

int runSdiag(const std::vector<std::string>& args, CliIo& io) {
  return runSdiagWith(args, io, kubeConnector(), grpcQueryConnector());
}

}  // namespace kubeslurm::cli
