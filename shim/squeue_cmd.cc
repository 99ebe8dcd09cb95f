// `squeue`: lists the SlurmJobs (and the Partitions, for the default partition and time
// limits) and prints them through squeue_format.h. Our flags are in kube_access.h; squeue's
// own -A is --accounts, so "every namespace" is --all-namespaces only.
#include <algorithm>
#include <cctype>
#include <ostream>

#include "operator/api/kubeslurm_types.h"
#include "operator/api/slurmjob.h"
#include "operator/kube/resource.h"
#include "shim/commands.h"
#include "shim/job_objects.h"
#include "shim/kube_access.h"
#include "shim/scheduler_access.h"
#include "shim/squeue_format.h"

namespace kubeslurm::shim {
namespace {

void addPartitions(const kube::Json& list, SqueueContext& context) {
  PartitionDefaults defaults = partitionDefaults(list);
  context.defaultPartition = std::move(defaults.defaultPartition);
  context.partitionDefaultTime = std::move(defaults.defaultTime);
}

// SCHEDNODES is in --start's default format, or asked for by %Y / -O schednodes.
bool wantsSchedNodes(const SqueueOptions& options) {
  if (options.format) return options.format->find('Y') != std::string::npos;
  if (options.formatLong) {
    std::string lower = *options.formatLong;
    std::ranges::transform(lower, lower.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return lower.find("schednodes") != std::string::npos;
  }
  return options.start;
}

// Best effort: without the query API squeue still answers, with "(null)" as slurmctld shows
// before its backfill pass.
void addSchedNodes(const ClusterSession& session, const SchedulerFlags& flags,
                   const QueryConnector& queries, const CliIo& io, SqueueContext& context) {
  auto client = queries(session, flags, io);
  if (!client.isOk()) return;
  auto pending = (*client)->listPendingJobs(session.namespaceName);
  if (!pending.isOk()) return;
  for (const rpc::PendingJob& job : pending->jobs) {
    if (!job.estimatedNodes.empty()) context.schedNodes[job.jobId] = job.estimatedNodes;
  }
}

}  // namespace

int runSqueueWith(const std::vector<std::string>& args, CliIo& io, const Connector& connect,
                  const QueryConnector& queries) {
  std::vector<std::string> squeueArgs = args;
  auto flags = takeKubeFlags(squeueArgs, /*allowAllNamespaces=*/true);
  auto schedulerFlags = takeSchedulerFlags(squeueArgs);
  if (!flags.isOk() || !schedulerFlags.isOk()) {
    io.err << "squeue: error: "
           << (flags.isOk() ? schedulerFlags.status() : flags.status()).message() << "\n";
    return 1;
  }
  const SqueueParse parse = parseSqueueArgs(squeueArgs);
  if (parse.exit) {
    io.out << parse.exit->out;
    io.err << parse.exit->err;
    return parse.exit->exitCode;
  }
  auto session = connect(*flags, io);
  if (!session.isOk()) {
    io.err << "squeue: error: " << session.status().message() << "\n";
    return 1;
  }
  auto jobs = kube::listAll(*session->reader, kube::resources::slurmJobs(), session->namespaceName,
                            kube::ListOptions{});
  if (!jobs.isOk()) {
    // What squeue says when it cannot reach slurmctld, then the cause.
    if (jobs.status().code() == StatusCode::kUnavailable) {
      io.err << "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n";
    }
    io.err << "squeue: error: " << jobs.status().message() << "\n";
    return 1;
  }
  SqueueContext context;
  context.now = io.now;
  context.utcOffsetSeconds = io.utcOffsetSeconds;
  // Partitions only refine the output (default partition, default time limits): a user who may
  // not list them still gets the jobs.
  auto partitions =
      kube::listAll(*session->reader, kube::resources::partitions(), "", kube::ListOptions{});
  if (partitions.isOk()) addPartitions(*partitions, context);

  std::vector<api::SlurmJobObject> objects = decodeJobList(*jobs);
  if (queries && wantsSchedNodes(parse.options)) {
    addSchedNodes(*session, *schedulerFlags, queries, io, context);
  }
  const SqueueOutput output = formatSqueue(objects, parse.options, context);
  io.out << output.out;
  io.err << output.err;
  return output.exitCode;
}

int runSqueue(const std::vector<std::string>& args, CliIo& io) {
  return runSqueueWith(args, io, kubeConnector(), grpcQueryConnector());
}

}  // namespace kubeslurm::shim
