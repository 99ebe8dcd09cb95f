// `squeue`: lists the SlurmJobs (and the Partitions, for the default partition and time
// limits) and prints them through squeue_format.h. Our flags are in kube_access.h; squeue's
// own -A is --accounts, so "every namespace" is --all-namespaces only.
#include <ostream>

#include "operator/api/kubeslurm_types.h"
#include "operator/api/slurmjob.h"
#include "operator/kube/resource.h"
#include "shim/commands.h"
#include "shim/kube_access.h"
#include "shim/squeue_format.h"

namespace kubeslurm::shim {
namespace {

// The partition a job without -p gets (controllers/snapshot.cc jobPartition): the one marked
// default (the first by name), else the only one.
void addPartitions(const kube::Json& list, SqueueContext& context) {
  std::vector<api::Partition> partitions;
  if (list.contains("items") && list["items"].is_array()) {
    for (const kube::Json& item : list["items"]) {
      auto partition = api::decodePartition(item);
      if (partition.isOk()) partitions.push_back(std::move(partition).value());
    }
  }
  std::ranges::sort(partitions, {}, [](const api::Partition& p) { return p.metadata.name; });
  for (const api::Partition& p : partitions) {
    context.partitionDefaultTime[p.metadata.name] = api::partitionDefaultTime(p.spec);
    if (p.spec.isDefault && context.defaultPartition.empty()) {
      context.defaultPartition = p.metadata.name;
    }
  }
  if (context.defaultPartition.empty() && partitions.size() == 1) {
    context.defaultPartition = partitions.front().metadata.name;
  }
}

}  // namespace

int runSqueueWith(const std::vector<std::string>& args, CliIo& io, const Connector& connect) {
  std::vector<std::string> squeueArgs = args;
  auto flags = takeKubeFlags(squeueArgs, /*allowAllNamespaces=*/true);
  if (!flags.isOk()) {
    io.err << "squeue: error: " << flags.status().message() << "\n";
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

  std::vector<api::SlurmJobObject> objects;
  if (jobs->contains("items") && (*jobs)["items"].is_array()) {
    for (const kube::Json& item : (*jobs)["items"]) {
      auto job = api::decodeSlurmJob(item);
      if (job.isOk()) objects.push_back(std::move(job).value());
    }
  }
  const SqueueOutput output = formatSqueue(objects, parse.options, context);
  io.out << output.out;
  io.err << output.err;
  return output.exitCode;
}

int runSqueue(const std::vector<std::string>& args, CliIo& io) {
  return runSqueueWith(args, io, kubeConnector());
}

}  // namespace kubeslurm::shim
