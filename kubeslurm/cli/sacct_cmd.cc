// `sacct`: lists the SlurmJobs (and the Partitions, for the default partition and time limits)
// and prints them through sacct_format.h. The SlurmJob objects are the accounting records: the
// operator keeps finished ones (spec.cancel's description: "The object stays for accounting").
#include <algorithm>
#include <ostream>

#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/cli/commands.h"
#include "kubeslurm/cli/job_objects.h"
#include "kubeslurm/cli/kube_access.h"
#include "kubeslurm/cli/sacct_format.h"
#include "kubeslurm/kube/resource.h"

namespace kubeslurm::cli {
namespace {

void addPartitions(const kube::Json& list, SacctContext& context) {
  PartitionDefaults defaults = partitionDefaults(list);
  context.defaultPartition = std::move(defaults.defaultPartition);
  context.partitionDefaultTime = std::move(defaults.defaultTime);
}

}  // namespace

int runSacctWith(const std::vector<std::string>& args, CliIo& io, const Connector& connect) {
  std::vector<std::string> sacctArgs = args;
  auto flags = takeKubeFlags(sacctArgs, /*allowAllNamespaces=*/true);
  if (!flags.isOk()) {
    io.err << "sacct: error: " << flags.status().message() << "\n";
    return 1;
  }
  SacctContext context;
  context.now = io.now;
  context.utcOffsetSeconds = io.utcOffsetSeconds;
  if (io.getenv) context.envFormat = io.getenv("SACCT_FORMAT");
  const SacctParse parse = parseSacctArgs(sacctArgs, context);
  if (parse.exit) {
    return emit(*parse.exit, io);
  }
  auto session = connect(*flags, io);
  if (!session.isOk()) {
    io.err << "sacct: error: " << session.status().message() << "\n";
    return 1;
  }
  // sacct's default user is the caller: the kubeconfig user, else $USER (kube_access.h).
  context.user = session->user;
  if (context.user.empty() && io.getenv) context.user = io.getenv("USER").value_or("");

  auto jobs = kube::listAll(*session->reader, kube::resources::slurmJobs(), session->namespaceName,
                            kube::ListOptions{});
  if (!jobs.isOk()) {
    io.err << "sacct: error: " << jobs.status().message() << "\n";
    return 1;
  }
  auto partitions =
      kube::listAll(*session->reader, kube::resources::partitions(), "", kube::ListOptions{});
  if (partitions.isOk()) addPartitions(*partitions, context);

  std::vector<api::SlurmJobObject> objects = decodeJobList(*jobs);
  const CommandOutput output = formatSacct(objects, parse, context);
  return emit(output, io);
}

int runSacct(const std::vector<std::string>& args, CliIo& io) {
  return runSacctWith(args, io, kubeConnector());
}

}  // namespace kubeslurm::cli
