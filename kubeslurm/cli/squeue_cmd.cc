// `squeue`: lists the SlurmJobs (and the Partitions, for the default partition and time
// limits) and prints them through squeue_format.h. Our flags are in kube_access.h; squeue's
// own -A is --accounts, so "every namespace" is --all-namespaces only.
#include "kubeslurm/cli/squeue_cmd.h"

#include <ctime>
#include <ostream>
#include <thread>
#include <tuple>

#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/cli/commands.h"
#include "kubeslurm/cli/job_objects.h"
#include "kubeslurm/cli/kube_access.h"
#include "kubeslurm/cli/scheduler_access.h"
#include "kubeslurm/cli/squeue_format.h"
#include "kubeslurm/kube/resource.h"

namespace kubeslurm::cli {
namespace {

void addPartitions(const kube::Json& list, SqueueContext& context) {
  PartitionDefaults defaults = partitionDefaults(list);
  context.defaultPartition = std::move(defaults.defaultPartition);
  context.partitionDefaultTime = std::move(defaults.defaultTime);
}

// Best effort: without the query API squeue still answers, with the status's figures (as of
// the job's last reason change) and SCHEDNODES "(null)", as slurmctld shows before its backfill
// pass.
void addLivePlan(const ClusterSession& session, const SchedulerFlags& flags,
                 const QueryConnector& queries, const CliIo& io,
                 std::vector<api::SlurmJobObject>& objects, SqueueContext& context) {
  auto client = queries(session, flags, io);
  if (!client.isOk()) return;
  auto pending = (*client)->listPendingJobs(session.namespaceName);
  if (!pending.isOk()) return;
  std::map<std::int64_t, const rpc::PendingJob*> byId;
  for (const rpc::PendingJob& job : pending->jobs) byId[job.jobId] = &job;
  for (api::SlurmJobObject& object : objects) {
    if (!object.status || !object.status->jobId || object.status->state != "PENDING") continue;
    const auto live = byId.find(*object.status->jobId);
    if (live == byId.end()) continue;  // not pending in the last plan: its status stands
    if (!live->second->estimatedNodes.empty()) {
      context.schedNodes[*object.status->jobId] = live->second->estimatedNodes;
    }
    if (live->second->estimatedStart > 0) {
      object.status->estimatedStart = live->second->estimatedStart;
    } else {
      object.status->estimatedStart.reset();
    }
    object.status->priority = live->second->priority.priority;
  }
}

// One listing, as squeue.c _print_job does it; returns the exit code of this listing.
int listOnce(const ClusterSession& session, const SchedulerFlags& schedulerFlags,
             const QueryConnector& queries, const SqueueOptions& options, SqueueContext context,
             CliIo& io) {
  auto jobs = kube::listAll(*session.reader, kube::resources::slurmJobs(), session.namespaceName,
                            kube::ListOptions{});
  if (!jobs.isOk()) {
    io.out << squeueDateLine(options, context);
    // What squeue says when it cannot reach slurmctld, then the cause.
    if (jobs.status().code() == StatusCode::kUnavailable) {
      io.err << "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n";
    }
    io.err << "squeue: error: " << jobs.status().message() << "\n";
    return 1;
  }
  // Partitions only refine the output (default partition, default time limits): a user who may
  // not list them still gets the jobs.
  auto partitions =
      kube::listAll(*session.reader, kube::resources::partitions(), "", kube::ListOptions{});
  if (partitions.isOk()) addPartitions(*partitions, context);

  std::vector<api::SlurmJobObject> objects = decodeJobList(*jobs);
  // slurmctld answers these from memory; the operator writes them into a job's status only
  // when its reason changes, so they come live from its query API.
  if (queries && showsPlanFigures(options)) {
    addLivePlan(session, schedulerFlags, queries, io, objects, context);
  }
  const CommandOutput output = formatSqueue(objects, options, context);
  return emit(output, io);
}

}  // namespace

int runSqueueIn(const std::vector<std::string>& args, CliIo& io,
                const SqueueEnvironment& environment) {
  std::vector<std::string> squeueArgs = args;
  auto flags = takeKubeFlags(squeueArgs, /*allowAllNamespaces=*/true);
  auto schedulerFlags = takeSchedulerFlags(squeueArgs);
  if (!flags.isOk() || !schedulerFlags.isOk()) {
    io.err << "squeue: error: "
           << (flags.isOk() ? schedulerFlags.status() : flags.status()).message() << "\n";
    return 1;
  }
  SqueueParse parse = parseSqueueArgs(squeueArgs);
  if (parse.exit) {
    return emit(*parse.exit, io);
  }
  auto session = environment.connect(*flags, io);
  if (!session.isOk()) {
    io.err << "squeue: error: " << session.status().message() << "\n";
    return 1;
  }
  SqueueOptions& options = parse.options;
  if (options.me) {
    // The Slurm user sbatch writes into spec.user: the kubeconfig user, else $USER.
    std::string caller = session->user;
    if (caller.empty() && io.getenv) caller = io.getenv("USER").value_or("");
    options.users = {caller};
  }
  SqueueContext context;
  context.now = io.now;
  context.utcOffsetSeconds = io.utcOffsetSeconds;
  // squeue.c main: list, and with -i print a blank line, sleep and list again until stopped;
  // a failed listing makes the exit code 1 but does not stop the loop.
  int exitCode = 0;
  std::int64_t waited = 0;
  for (int iteration = 1;; ++iteration) {
    if (listOnce(*session, *schedulerFlags, environment.queries, options, context, io) != 0) {
      exitCode = 1;
    }
    if (options.iterate <= 0) break;
    io.out << "\n";
    io.out.flush();
    io.err.flush();
    if (!io.out || (environment.maxIterations > 0 && iteration >= environment.maxIterations)) {
      break;
    }
    const std::chrono::seconds pause(options.iterate);
    if (environment.sleep) {
      if (!environment.sleep(pause)) break;
    } else {
      std::this_thread::sleep_for(pause);
    }
    waited += options.iterate;
    if (environment.clock) {
      std::tie(context.now, context.utcOffsetSeconds) = environment.clock();
    } else {
      context.now = io.now + waited;
    }
  }
  return exitCode;
}

int runSqueueWith(const std::vector<std::string>& args, CliIo& io, const Connector& connect,
                  const QueryConnector& queries) {
  SqueueEnvironment environment;
  environment.connect = connect;
  environment.queries = queries;
  return runSqueueIn(args, io, environment);
}

int runSqueue(const std::vector<std::string>& args, CliIo& io) {
  SqueueEnvironment environment;
  environment.connect = kubeConnector();
  environment.queries = grpcQueryConnector();
  environment.clock = [] {
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    return std::pair<std::int64_t, std::int32_t>(static_cast<std::int64_t>(now),
                                                 static_cast<std::int32_t>(local.tm_gmtoff));
  };
  return runSqueueIn(args, io, environment);
}

}  // namespace kubeslurm::cli
