// `sacct`: the job records of the operator's accounting store (through its query API), which
// outlive the SlurmJobs, and the live SlurmJobs (and the Partitions, for the default partition
// and time limits), printed through sacct_format.h. A live job's record replaces the store's
// record of the same run, which the operator writes a moment later.
#include <algorithm>
#include <map>
#include <ostream>
#include <utility>
#include <vector>

#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/cli/cluster_nodes.h"
#include "kubeslurm/cli/commands.h"
#include "kubeslurm/cli/job_objects.h"
#include "kubeslurm/cli/kube_access.h"
#include "kubeslurm/cli/sacct_format.h"
#include "kubeslurm/cli/scheduler_access.h"
#include "kubeslurm/kube/resource.h"

namespace kubeslurm::cli {
namespace {

// The partitions' defaults into `context`; returns the partitions, decoded.
std::vector<api::Partition> addPartitions(const kube::Json& list, SacctContext& context) {
  PartitionDefaults defaults = partitionDefaults(list);
  context.defaultPartition = std::move(defaults.defaultPartition);
  context.partitionDefaultTime = std::move(defaults.defaultTime);
  context.partitionMemory = std::move(defaults.memory);
  return std::move(defaults.partitions);
}

// Whether a live job holds all of each node's memory (no memory of its own, no default of its
// partition's): only then does sacct list the nodes, whose memory that is.
bool holdsWholeNodes(const std::vector<api::SlurmJobObject>& jobs, const SacctContext& context) {
  return std::ranges::any_of(jobs, [&context](const api::SlurmJobObject& job) {
    const auto memory = context.partitionMemory.find(
        api::timeLimitPartition(job.request, context.defaultPartition));
    return !api::recordedMemory(
                job.request,
                memory == context.partitionMemory.end() ? api::PartitionMemory{} : memory->second,
                false, 1, 1, 0, std::nullopt)
                .tresMb;
  });
}

// Each partition's first node's memory, as the operator charges a job that holds all of each
// node's memory.
void addNodeMemory(kube::Reader& reader, const std::vector<api::Partition>& partitions,
                   SacctContext& context) {
  auto nodes = loadNodes(reader);
  if (!nodes.isOk()) return;
  for (const api::Partition& partition : partitions) {
    if (const auto mb = firstNodeMemoryMb(partition.spec, *nodes)) {
      context.nodeMemoryMb[partition.metadata.name] = *mb;
    }
  }
}

// What sacct asks the store for: a superset of what it prints (the formatter applies Slurm's
// window, state and case rules itself). -j reaches back to the epoch for every user; otherwise
// runs that had not ended a day before the window's start (the default window starts at local
// midnight), of the users the formatter would show.
rpc::JobRecordQuery storeQuery(const SacctOptions& o, const SacctContext& context,
                               const std::string& namespaceName) {
  rpc::JobRecordQuery query;
  query.namespaceName = namespaceName;
  if (!o.jobs.empty()) {
    for (const SacctJobSelector& selector : o.jobs) query.jobIds.push_back(selector.jobId);
    if (!o.users.empty() && !o.allUsers) query.users = o.users;
    return query;
  }
  query.from = o.start.value_or(context.now) - 86400;
  if (!o.allUsers) query.users = o.users.empty() ? std::vector{context.user} : o.users;
  return query;
}

// The store's records with the live jobs' in place of the same runs'. Silent when there is no
// query API to ask or the operator keeps no store; a store that fails is said, since the
// answer then lacks what only it holds.
std::vector<accounting::JobRecord> allRecords(const std::vector<api::SlurmJobObject>& objects,
                                              const SacctParse& parse, const SacctContext& context,
                                              const ClusterSession& session,
                                              const SchedulerFlags& flags,
                                              const QueryConnector& queries, CliIo& io) {
  std::map<std::pair<std::int64_t, std::int64_t>, accounting::JobRecord> byRun;
  if (queries) {
    auto client = queries(session, flags, io);
    if (client.isOk()) {
      auto stored =
          (*client)->listJobRecords(storeQuery(parse.options, context, session.namespaceName));
      if (stored.isOk()) {
        for (accounting::JobRecord& r : *stored) {
          byRun[{r.jobId, r.attempt}] = std::move(r);
        }
      } else if (stored.status().code() != StatusCode::kFailedPrecondition) {
        io.err << "sacct: error: job records that outlive the SlurmJobs are not shown: "
               << describeQueryFailure(stored.status()) << "\n";
      }
    }
  }
  for (accounting::JobRecord& r : liveJobRecords(objects, context)) {
    byRun[{r.jobId, r.attempt}] = std::move(r);
  }
  std::vector<accounting::JobRecord> records;
  records.reserve(byRun.size());
  for (auto& [run, record] : byRun) records.push_back(std::move(record));
  return records;
}

}  // namespace

int runSacctWith(const std::vector<std::string>& args, CliIo& io, const Connector& connect,
                 const QueryConnector& queries) {
  std::vector<std::string> sacctArgs = args;
  auto flags = takeKubeFlags(sacctArgs, /*allowAllNamespaces=*/true);
  auto schedulerFlags = takeSchedulerFlags(sacctArgs);
  if (!flags.isOk() || !schedulerFlags.isOk()) {
    io.err << "sacct: error: "
           << (!flags.isOk() ? flags.status() : schedulerFlags.status()).message() << "\n";
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
  std::vector<api::Partition> decoded;
  if (partitions.isOk()) decoded = addPartitions(*partitions, context);

  const std::vector<api::SlurmJobObject> objects = decodeJobList(*jobs);
  if (partitions.isOk() && holdsWholeNodes(objects, context)) {
    addNodeMemory(*session->reader, decoded, context);
  }
  const std::vector<accounting::JobRecord> records =
      allRecords(objects, parse, context, *session, *schedulerFlags, queries, io);
  const CommandOutput output = formatSacct(records, parse, context);
  return emit(output, io);
}

int runSacct(const std::vector<std::string>& args, CliIo& io) {
  return runSacctWith(args, io, kubeConnector(), grpcQueryConnector());
}

}  // namespace kubeslurm::cli
