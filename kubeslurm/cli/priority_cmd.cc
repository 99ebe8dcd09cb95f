// `sprio` and `sshare`: the live figures come from the operator's query API
// (scheduler_access.h) and print through priority_format.h.
#include <ostream>

#include "kubeslurm/cli/commands.h"
#include "kubeslurm/cli/priority_format.h"
#include "kubeslurm/cli/scheduler_access.h"

namespace kubeslurm::cli {
namespace {

// What both commands do before their query: our flags out, then the cluster and the query API.
struct QuerySession {
  ClusterSession cluster;
  std::unique_ptr<rpc::QueryClient> client;
};

StatusOr<QuerySession> open(std::vector<std::string>& args, CliIo& io, const Connector& connect,
                            const QueryConnector& queries, bool allowAllNamespaces) {
  auto kubeFlags = takeKubeFlags(args, allowAllNamespaces);
  if (!kubeFlags.isOk()) return kubeFlags.status();
  auto schedulerFlags = takeSchedulerFlags(args);
  if (!schedulerFlags.isOk()) return schedulerFlags.status();
  QuerySession session;
  auto cluster = connect(*kubeFlags, io);
  if (!cluster.isOk()) return cluster.status();
  session.cluster = std::move(cluster).value();
  auto client = queries(session.cluster, *schedulerFlags, io);
  if (!client.isOk()) return client.status();
  session.client = std::move(client).value();
  return session;
}

// Our flags come out first, so that Slurm's parser never sees them.
std::vector<std::string> slurmArgs(std::vector<std::string> args) {
  (void)takeKubeFlags(args, true);
  (void)takeSchedulerFlags(args);
  return args;
}

}  // namespace

int runSprioWith(const std::vector<std::string>& args, CliIo& io, const Connector& connect,
                 const QueryConnector& queries) {
  const SprioParse parse = parseSprioArgs(slurmArgs(args));
  if (parse.exit) {
    return emit(*parse.exit, io);
  }
  std::vector<std::string> rest = args;
  auto session = open(rest, io, connect, queries, /*allowAllNamespaces=*/true);
  if (!session.isOk()) {
    io.err << "sprio: error: " << describeQueryFailure(session.status()) << "\n";
    return 1;
  }
  auto answer = session->client->listPendingJobs(session->cluster.namespaceName);
  if (!answer.isOk()) {
    io.err << "Couldn't get priority factors from controller: "
           << describeQueryFailure(answer.status()) << "\n";
    return 1;
  }
  const CommandOutput output = formatSprio(answer->jobs, answer->weights, parse.options);
  return emit(output, io);
}

int runSshareWith(const std::vector<std::string>& args, CliIo& io, const Connector& connect,
                  const QueryConnector& queries) {
  const SshareParse parse = parseSshareArgs(slurmArgs(args));
  if (parse.exit) {
    return emit(*parse.exit, io);
  }
  std::vector<std::string> rest = args;
  auto session = open(rest, io, connect, queries, /*allowAllNamespaces=*/false);
  if (!session.isOk()) {
    io.err << "sshare: error: " << describeQueryFailure(session.status()) << "\n";
    return 1;
  }
  auto answer = session->client->fairShare();
  if (!answer.isOk()) {
    io.err << "Couldn't get shares from controller: " << describeQueryFailure(answer.status())
           << "\n";
    return 1;
  }
  // The Slurm user, as sbatch records it: the kubeconfig user, else $USER.
  std::string caller = session->cluster.user;
  if (caller.empty() && io.getenv) caller = io.getenv("USER").value_or("");
  const CommandOutput output = formatSshare(answer->rows, answer->fairTree, parse.options, caller);
  return emit(output, io);
}

int runSprio(const std::vector<std::string>& args, CliIo& io) {
  return runSprioWith(args, io, kubeConnector(), grpcQueryConnector());
}

int runSshare(const std::vector<std::string>& args, CliIo& io) {
  return runSshareWith(args, io, kubeConnector(), grpcQueryConnector());
}

}  // namespace kubeslurm::cli
