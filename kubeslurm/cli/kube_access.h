// How the CLI reaches the cluster: kubectl's flags and config, then a client for the commands.
//
// Flags, taken out of a command's arguments before Slurm's parser sees them:
//   --kubeconfig FILE   instead of $KUBECONFIG / ~/.kube/config (kubectl's order; no
//                       kubeconfig at all means the pod's service account, as kubectl)
//   --context NAME      instead of $KUBESLURM_CONTEXT, else the current context
//   --namespace NS      instead of $KUBESLURM_NAMESPACE, else the context's namespace
//                       ("default" when it names none)
//   --all-namespaces    (squeue only) every namespace
// Each also takes "--flag=value". Slurm's short options keep their meaning: sbatch and squeue
// use -n and -A themselves, so there is no short form of ours.
//
// The Slurm user of a submission is the kubeconfig context's user name (what the cluster calls
// the credentials); with no kubeconfig, $USER.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kubeslurm/base/status.h"
#include "kubeslurm/cli/cli_io.h"
#include "kubeslurm/cli/commands.h"
#include "kubeslurm/kube/client.h"
#include "kubeslurm/rpc/client.h"

namespace kubeslurm::cli {

struct KubeFlags {
  std::string kubeconfig{};
  std::string context{};
  std::string namespaceName{};
  bool allNamespaces = false;
};

// Removes our flags from `args` (up to a "--"). `allowAllNamespaces`: whether
// --all-namespaces is one of them. Error: a flag without its value.
StatusOr<KubeFlags> takeKubeFlags(std::vector<std::string>& args, bool allowAllNamespaces);

// A connection for one command. `reader`/`writer` stay valid while the session lives.
struct ClusterSession {
  kube::Reader* reader = nullptr;
  kube::Writer* writer = nullptr;
  kube::Watcher* watcher = nullptr;  // null where the connection cannot watch (tests' fakes)
  std::string namespaceName;         // the namespace to use ("" with --all-namespaces)
  std::string user;                  // the kubeconfig context's user; "" when none
  std::string bearerToken;  // the credentials' token, for the operator's query API; "" none
  std::shared_ptr<void> owner;
};

using Connector = std::function<StatusOr<ClusterSession>(const KubeFlags&, const CliIo&)>;

// The real one: kubeconfig (or in-cluster config) and an HTTPS client.
Connector kubeConnector();

// The kubeconfig context's user for `flags` ("" with no kubeconfig or context); reads files
// only, no connection.
std::string kubeconfigUser(const KubeFlags& flags, const CliIo& io);

// Where the operator's query API is (scheduler_access.h has the rules): --scheduler,
// --scheduler-ca, --scheduler-server-name.
struct SchedulerFlags {
  std::string address;
  std::string caFile;
  std::string serverName;
};

// A client of the operator's query API for a session (scheduler_access.h grpcQueryConnector()).
using QueryConnector = std::function<StatusOr<std::unique_ptr<rpc::QueryClient>>(
    const ClusterSession&, const SchedulerFlags&, const CliIo&)>;

// What sbatch needs to submit: the connection, how to wait between polls, and the query API
// for --test-only.
struct SubmitEnvironment {
  Connector connect;
  std::function<void(std::chrono::milliseconds)> sleep;
  QueryConnector queries{};
};

// The commands that talk to the cluster, with the connection injectable for tests
// (commands.h has the entry points that use kubeConnector()).
// `queries`: the operator's query API for SCHEDNODES; empty or unreachable, "(null)" is shown.
int runSqueueWith(const std::vector<std::string>& args, CliIo& io, const Connector& connect,
                  const QueryConnector& queries = {});
int runScancelWith(const std::vector<std::string>& args, CliIo& io, const Connector& connect);
int runSinfoWith(const std::vector<std::string>& args, CliIo& io, const Connector& connect);
// `queries`: the operator's query API for the job records that outlive the SlurmJobs; empty or
// unreachable, sacct shows the live SlurmJobs only.
int runSacctWith(const std::vector<std::string>& args, CliIo& io, const Connector& connect,
                 const QueryConnector& queries = {});
// `queries`: the operator's query API, which sreport's job records come from (required).
int runSreportWith(const std::vector<std::string>& args, CliIo& io, const Connector& connect,
                   const QueryConnector& queries);
int runSacctmgrWith(const std::vector<std::string>& args, CliIo& io, const Connector& connect);
// scontrol's offline commands (hostnames, hostlist) never call `connect`.
// `sleep`: between polls for a task split off its array (empty: std::this_thread::sleep_for).
int runScontrolWith(const std::vector<std::string>& args, CliIo& io, const Connector& connect,
                    std::function<void(std::chrono::milliseconds)> sleep = {});
int runSbatchWith(const std::vector<std::string>& args, CliIo& io,
                  const SubmitEnvironment& environment);
int runSrunTestOnlyWith(const SrunOptions& options, const std::vector<std::string>& command,
                        CliIo& io, const SubmitEnvironment& environment);

}  // namespace kubeslurm::cli
