// The operator's gRPC query server (scheduler.proto). It serves the latest QueryState, over TLS
// only, to callers whose bearer token the Authorizer accepts. The operator publishes a new state
// after each scheduling cycle; a replica that does not lead has none and answers UNAVAILABLE,
// which the CLI reports as "the scheduler is not answering".
//
// Callers are outside input until the API server says who they are, so the server bounds what
// any of them can cost (security review H3): a per-peer call rate checked before a token is
// reviewed, gRPC's thread quota and streams per connection, the size of a request, and how many
// --test-only plans run at once.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeslurm/access/access_review.h"
#include "kubeslurm/accounting/job_records.h"
#include "kubeslurm/base/status.h"
#include "kubeslurm/kube/clock.h"
#include "kubeslurm/rpc/query_state.h"
#include "kubeslurm/rpc/step_proxy.h"

namespace kubeslurm::rpc {

struct ServerOptions {
  std::string address;         // "0.0.0.0:9443"; port 0 picks a free one (tests)
  std::string certificatePem;  // the operator's serving certificate (chain)
  std::string privateKeyPem;
  // gRPC's threads for calls; a call past them is refused (RESOURCE_EXHAUSTED) rather than
  // queued without end. Each output stream of a login host's step holds one for its life (one
  // per rank of the step).
  int maxThreads = 256;
  int maxConcurrentStreams = 16;  // per connection
  // A --test-only SlurmJob carries its script (at most 1 MiB, as the webhook allows) and template.
  int maxReceiveBytes = 2 << 20;
  double peerCallsPerSecond = 20;  // per peer address, before authentication
  double peerBurst = 40;
  int maxConcurrentTestOnly = 2;  // plans are CPU-heavy; more wait for the caller to retry
  // Job records per ListJobRecords page (a request may ask for fewer), and entries per list a
  // request may carry (users, job ids): sacct pages through a month, it never takes it at once.
  std::uint32_t maxRecordsPerPage = 5000;
  int maxRequestListEntries = 1000;
  kube::Clock* clock = nullptr;  // steadyClock() when null
  StepProxyOptions stepProxy;
};

using StateSource = std::function<std::shared_ptr<const QueryState>()>;

// Plans a job (a SlurmJob as JSON, submitted by `caller` in `namespaceName`) against the last
// cycle's cluster. Errors: kInvalidArgument (the job is not valid: the message is slurmctld's),
// kResourceExhausted (it could never run: "Requested node configuration is not available"),
// kUnavailable (no cycle to plan against).
// The server parses the SlurmJob within limits (its size, and a depth of 100) before the handler
// sees it.
using TestOnlyHandler = std::function<StatusOr<TestOnlyAnswer>(const access::Identity& caller,
                                                               const std::string& namespaceName,
                                                               const nlohmann::json& slurmJob)>;

// The accounting store's records that `filter` selects (sacct); the server sets every field but
// the cluster, which is the operator's. Null: the operator keeps no records.
using RecordQuery = std::function<StatusOr<std::vector<accounting::JobRecord>>(
    const accounting::JobFilter& filter)>;

class QueryServer {
 public:
  virtual ~QueryServer() = default;
  virtual int port() const = 0;  // the port bound
  virtual void stop() = 0;       // waits for calls in flight; idempotent
};

// Error: the address cannot be bound, or the certificate or key is unusable.
// `steps`: where the step proxy (step_proxy.h) finds a job's ranks; null: no proxy (the operator
// runs without the in-pod runtime), and a login host's srun is told so.
StatusOr<std::unique_ptr<QueryServer>> startQueryServer(const ServerOptions& options,
                                                        StateSource state, TestOnlyHandler testOnly,
                                                        access::Authorizer& authorizer,
                                                        RecordQuery records = nullptr,
                                                        StepRouter steps = nullptr);

}  // namespace kubeslurm::rpc
