// The CLI's side of the query API: one TLS channel to the operator, the caller's bearer token on
// every call, and the answers as plain QueryState values.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kubeslurm/accounting/job_records.h"
#include "kubeslurm/base/status.h"
#include "kubeslurm/rpc/query_state.h"

namespace grpc {
class Channel;
}  // namespace grpc

namespace kubeslurm::rpc {

struct ClientOptions {
  std::string address;             // "host:port"
  std::string caPem;               // trusted to sign the operator's certificate
  std::string serverNameOverride;  // the name the certificate must carry, when not the host's
  std::string bearerToken;
  std::chrono::milliseconds timeout{10000};
};

struct PendingJobsAnswer {
  std::int64_t planTime = 0;
  std::vector<PendingJob> jobs;
  PriorityWeights weights;
};

struct FairShareAnswer {
  std::int64_t planTime = 0;
  std::vector<FairShareRow> rows;
  bool fairTree = true;
};

struct StatisticsAnswer {
  std::int64_t planTime = 0;
  Statistics statistics;
};

// Which job records sacct asks the store for: a superset of what it prints, which sacct narrows
// by Slurm's rules itself.
struct JobRecordQuery {
  std::string namespaceName;  // "": every namespace
  std::optional<std::int64_t> from;
  std::vector<std::string> users;  // empty: every user the caller may see
  std::vector<std::int64_t> jobIds;
  std::uint32_t pageSize = 0;  // 0: the server's
};

class QueryClient {
 public:
  virtual ~QueryClient() = default;
  // `namespaceName` "": every namespace.
  virtual StatusOr<PendingJobsAnswer> listPendingJobs(const std::string& namespaceName) = 0;
  virtual StatusOr<FairShareAnswer> fairShare() = 0;
  virtual StatusOr<StatisticsAnswer> statistics() = 0;
  virtual StatusOr<TestOnlyAnswer> testOnly(const std::string& namespaceName,
                                            const std::string& slurmJobJson) = 0;
  // Every page of the records `query` selects, by job id and attempt. kFailedPrecondition: the
  // operator keeps no records.
  virtual StatusOr<std::vector<accounting::JobRecord>> listJobRecords(
      const JobRecordQuery& query) = 0;
};

// The TLS channel to the operator's query API that a QueryClient uses, for the step proxy's
// callers (a login host's srun), who add the bearer token to each call themselves.
// `ownConnection`: a TCP connection of its own rather than one shared with every channel of the
// same target: each rank of a step streams for as long as the step runs, and one connection
// carries at most the server's streams per connection.
std::shared_ptr<grpc::Channel> openOperatorChannel(const ClientOptions& options,
                                                   bool ownConnection = false);

// Errors carry gRPC's meaning as a StatusCode (UNAUTHENTICATED -> kUnauthenticated, ...) and
// the server's message.
std::unique_ptr<QueryClient> connectQueryClient(const ClientOptions& options);

}  // namespace kubeslurm::rpc
