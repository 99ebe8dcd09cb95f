// The operator's gRPC query server (scheduler.proto). It serves the latest QueryState, over TLS
// only, to callers whose bearer token the Authorizer accepts. The operator publishes a new state
// after each scheduling cycle; a replica that does not lead has none and answers UNAVAILABLE,
// which the CLI reports as "the scheduler is not answering".
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "kubeslurm/access/access_review.h"
#include "kubeslurm/base/status.h"
#include "kubeslurm/rpc/query_state.h"

namespace kubeslurm::rpc {

struct ServerOptions {
  std::string address;         // "0.0.0.0:9443"; port 0 picks a free one (tests)
  std::string certificatePem;  // the operator's serving certificate (chain)
  std::string privateKeyPem;
};

using StateSource = std::function<std::shared_ptr<const QueryState>()>;

// Plans a job (a SlurmJob as JSON, for `namespaceName`) against the last cycle's cluster.
// Errors: kInvalidArgument (the job is not valid: the message is slurmctld's),
// kResourceExhausted (it could never run: "Requested node configuration is not available"),
// kUnavailable (no cycle to plan against).
using TestOnlyHandler = std::function<StatusOr<TestOnlyAnswer>(const std::string& namespaceName,
                                                               const std::string& slurmJobJson)>;

class QueryServer {
 public:
  virtual ~QueryServer() = default;
  virtual int port() const = 0;  // the port bound
  virtual void stop() = 0;       // waits for calls in flight; idempotent
};

// Error: the address cannot be bound, or the certificate or key is unusable.
StatusOr<std::unique_ptr<QueryServer>> startQueryServer(const ServerOptions& options,
                                                        StateSource state, TestOnlyHandler testOnly,
                                                        access::Authorizer& authorizer);

}  // namespace kubeslurm::rpc
