// How the CLI reaches the operator's query API (kubeslurm/rpc): sprio, sshare and the live parts
// of other commands.
//
// The endpoint, in this order:
//   --scheduler HOST:PORT, else $KUBESLURM_SCHEDULER, else the `address` of the ConfigMap
//   `kubeslurm-scheduler` in the operator's namespace ($KUBESLURM_OPERATOR_NAMESPACE, else
//   kubeslurm-system), which the Helm chart writes with the Service's in-cluster name.
// The CA that signed the operator's certificate: --scheduler-ca FILE, else
//   $KUBESLURM_SCHEDULER_CA, else that ConfigMap's `ca.crt`.
// The name the certificate must carry: --scheduler-server-name, else
//   $KUBESLURM_SCHEDULER_SERVER_NAME, else the ConfigMap's `serverName` (so that
//   `kubectl port-forward` to 127.0.0.1 still checks the operator's real name).
// The caller authenticates with the bearer token of their kubeconfig credentials.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kubeslurm/cli/kube_access.h"
#include "kubeslurm/rpc/client.h"

namespace kubeslurm::cli {

// Removes our flags from `args` (up to a "--"). Error: a flag without its value.
StatusOr<SchedulerFlags> takeSchedulerFlags(std::vector<std::string>& args);

// Discovery as above, and the session's bearer token: how to reach the query API.
StatusOr<rpc::ClientOptions> schedulerEndpoint(const ClusterSession& session,
                                               const SchedulerFlags& flags, const CliIo& io);

// The real one: discovery as above, then a TLS channel with the session's bearer token.
QueryConnector grpcQueryConnector();

// What a failed query says to the user ("Unable to contact the scheduler ..." and why).
std::string describeQueryFailure(const Status& status);

int runSprioWith(const std::vector<std::string>& args, CliIo& io, const Connector& connect,
                 const QueryConnector& queries);
int runSshareWith(const std::vector<std::string>& args, CliIo& io, const Connector& connect,
                  const QueryConnector& queries);

}  // namespace kubeslurm::cli
