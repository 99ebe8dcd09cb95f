#include "kubeslurm/rpc/server.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <utility>

#include <grpcpp/grpcpp.h>

#include "kubeslurm/access/identity.h"
#include "kubeslurm/api/json_text.h"
#include "kubeslurm/rpc/convert.h"
#include "kubeslurm/rpc/peer_limits.h"
#include "kubeslurm/rpc/scheduler.grpc.pb.h"

namespace kubeslurm::rpc {

using access::Authorizer;
using access::Identity;
using access::Permission;
namespace {

constexpr std::string_view kBearer = "Bearer ";

// The permission each call needs: what the same user would need to read the underlying objects
// with kubectl, so RBAC written for kubectl governs the query API too.
Permission jobsPermission(const std::string& namespaceName) {
  return {"list", "kubeslurm.io", "slurmjobs", namespaceName};
}
Permission accountsPermission() { return {"list", "kubeslurm.io", "accounts", ""}; }
// A what-if submission needs what the submission itself would.
Permission submitPermission(const std::string& namespaceName) {
  return {"create", "kubeslurm.io", "slurmjobs", namespaceName};
}

// Counts a --test-only plan in flight for as long as it lives, if there is room for one.
class PlanSlot {
 public:
  PlanSlot(std::atomic<int>& inFlight, int limit) : inFlight_(inFlight) {
    taken_ = inFlight_.fetch_add(1) < limit;
    if (!taken_) inFlight_.fetch_sub(1);
  }
  ~PlanSlot() {
    if (taken_) inFlight_.fetch_sub(1);
  }
  PlanSlot(const PlanSlot&) = delete;
  PlanSlot& operator=(const PlanSlot&) = delete;
  bool taken() const { return taken_; }

 private:
  std::atomic<int>& inFlight_;
  bool taken_ = false;
};

class SchedulerService final : public v1alpha1::Scheduler::Service {
 public:
  SchedulerService(StateSource state, TestOnlyHandler testOnly, RecordQuery records,
                   Authorizer& authorizer, const ServerOptions& options)
      : state_(std::move(state)),
        testOnly_(std::move(testOnly)),
        records_(std::move(records)),
        authorizer_(authorizer),
        maxRecordsPerPage_(std::max<std::uint32_t>(options.maxRecordsPerPage, 1)),
        maxListEntries_(options.maxRequestListEntries),
        clock_(options.clock != nullptr ? *options.clock : kube::steadyClock()),
        peers_(options.peerCallsPerSecond, options.peerBurst),
        maxTestOnly_(options.maxConcurrentTestOnly) {}

  grpc::Status ListPendingJobs(grpc::ServerContext* context,
                               const v1alpha1::ListPendingJobsRequest* request,
                               v1alpha1::ListPendingJobsResponse* response) override {
    auto admitted = admit(*context, jobsPermission(request->namespace_()));
    if (!admitted.isOk()) return toGrpc(admitted.status());
    const QueryState& state = *admitted->state;
    response->set_plan_time(state.planTime);
    toProto(state.weights, *response->mutable_weights());
    for (const PendingJob& job : state.pending) {
      if (!request->namespace_().empty() && job.namespaceName != request->namespace_()) continue;
      toProto(job, *response->add_jobs());
    }
    return grpc::Status::OK;
  }

  grpc::Status GetFairShare(grpc::ServerContext* context, const v1alpha1::GetFairShareRequest*,
                            v1alpha1::GetFairShareResponse* response) override {
    auto admitted = admit(*context, accountsPermission());
    if (!admitted.isOk()) return toGrpc(admitted.status());
    const QueryState& state = *admitted->state;
    response->set_plan_time(state.planTime);
    response->set_fair_tree(state.fairTree);
    for (const FairShareRow& row : state.fairShare) toProto(row, *response->add_rows());
    return grpc::Status::OK;
  }

  grpc::Status GetStatistics(grpc::ServerContext* context, const v1alpha1::GetStatisticsRequest*,
                             v1alpha1::GetStatisticsResponse* response) override {
    auto admitted = admit(*context, accountsPermission());
    if (!admitted.isOk()) return toGrpc(admitted.status());
    toProto(admitted->state->statistics, admitted->state->planTime, *response);
    return grpc::Status::OK;
  }

  grpc::Status TestOnly(grpc::ServerContext* context, const v1alpha1::TestOnlyRequest* request,
                        v1alpha1::TestOnlyResponse* response) override {
    if (request->namespace_().empty()) {
      return toGrpc(invalidArgument("a namespace is required"));
    }
    auto admitted = admit(*context, submitPermission(request->namespace_()));
    if (!admitted.isOk()) return toGrpc(admitted.status());
    const PlanSlot slot(testOnlyInFlight_, maxTestOnly_);
    if (!slot.taken()) {
      return toGrpc(Status(StatusCode::kUnavailable,
                           "Resource temporarily unavailable: other --test-only plans are "
                           "running; try again"));
    }
    auto job = api::parseJson(request->slurm_job_json(), {request->slurm_job_json().size(), 100});
    if (!job.isOk()) return toGrpc(invalidArgument("the SlurmJob: " + job.status().message()));
    auto answer = testOnly_(admitted->caller, request->namespace_(), *job);
    if (!answer.isOk()) return toGrpc(answer.status());
    response->set_job_id(answer->jobId);
    response->set_start_time(answer->startTime);
    response->set_processors(answer->processors);
    response->set_nodes(answer->nodes);
    response->set_partition(answer->partition);
    return grpc::Status::OK;
  }

  grpc::Status ListJobRecords(grpc::ServerContext* context,
                              const v1alpha1::ListJobRecordsRequest* request,
                              v1alpha1::ListJobRecordsResponse* response) override {
    auto caller = authenticate(*context);
    if (!caller.isOk()) return toGrpc(caller.status());
    if (!records_) {
      return toGrpc(failedPrecondition(
          "this operator keeps no job records (it runs without --accounting-db or "
          "--accounting-postgres-dsn-file)"));
    }
    if (request->users_size() > maxListEntries_ || request->job_ids_size() > maxListEntries_) {
      return toGrpc(invalidArgument("at most " + std::to_string(maxListEntries_) +
                                    " users and job ids per request"));
    }
    accounting::JobFilter filter;
    if (!request->namespace_().empty()) filter.namespaces = {request->namespace_()};
    if (request->has_from()) filter.from = request->from();
    filter.users.assign(request->users().begin(), request->users().end());
    filter.jobIds.assign(request->job_ids().begin(), request->job_ids().end());
    // PrivateData=jobs: whoever may not list the namespace's SlurmJobs sees their own records,
    // and asking for someone else's finds nothing.
    if (!authorizer_.authorize(*caller, jobsPermission(request->namespace_())).isOk()) {
      const std::string self = access::slurmUserName(caller->user);
      if (!filter.users.empty() && std::ranges::find(filter.users, self) == filter.users.end()) {
        return grpc::Status::OK;
      }
      filter.users = {self};
    }
    if (request->after_job_id() != 0 || request->after_attempt() != 0) {
      filter.after = std::make_pair(request->after_job_id(), request->after_attempt());
    }
    const std::uint32_t page = request->page_size() == 0
                                   ? maxRecordsPerPage_
                                   : std::min(request->page_size(), maxRecordsPerPage_);
    filter.limit = page;
    auto records = records_(filter);
    if (!records.isOk()) return toGrpc(records.status());
    for (const accounting::JobRecord& record : *records) toProto(record, *response->add_records());
    response->set_more(records->size() == page);
    return grpc::Status::OK;
  }

 private:
  struct Admitted {
    Identity caller;
    std::shared_ptr<const QueryState> state;
  };

  // The peer's rate, then authentication, then authorization, then the state: a caller without
  // rights learns nothing, not even whether this replica leads.
  StatusOr<Admitted> admit(const grpc::ServerContext& context, const Permission& permission) {
    auto caller = authenticate(context);
    if (!caller.isOk()) return caller.status();
    if (Status allowed = authorizer_.authorize(*caller, permission); !allowed.isOk()) {
      return allowed;
    }
    std::shared_ptr<const QueryState> state = state_();
    if (!state || state->planTime == 0) {
      return Status(StatusCode::kUnavailable,
                    "this operator replica has no scheduler state (not the leader, or no "
                    "cycle has run yet)");
    }
    return Admitted{std::move(caller).value(), std::move(state)};
  }

 public:
  // The peer's rate, then who the bearer token is (the step proxy's callers too).
  StatusOr<Identity> authenticate(const grpc::ServerContext& context) {
    if (!peers_.admit(peerAddress(context.peer()), clock_.now())) {
      return Status(StatusCode::kResourceExhausted,
                    "Resource temporarily unavailable: too many requests from this address");
    }
    std::string token;
    const auto& metadata = context.client_metadata();
    if (auto it = metadata.find("authorization"); it != metadata.end()) {
      const std::string_view value(it->second.data(), it->second.size());
      if (value.starts_with(kBearer)) token = std::string(value.substr(kBearer.size()));
    }
    if (token.empty()) {
      return Status(StatusCode::kUnauthenticated,
                    "a Kubernetes bearer token is required (authorization: Bearer TOKEN)");
    }
    return authorizer_.authenticate(token);
  }

 private:
  StateSource state_;
  TestOnlyHandler testOnly_;
  RecordQuery records_;
  Authorizer& authorizer_;
  std::uint32_t maxRecordsPerPage_;
  int maxListEntries_;
  kube::Clock& clock_;
  PeerRateLimiter peers_;
  int maxTestOnly_;
  std::atomic<int> testOnlyInFlight_{0};
};

class GrpcQueryServer final : public QueryServer {
 public:
  GrpcQueryServer(std::unique_ptr<SchedulerService> service,
                  std::unique_ptr<grpc::Service> stepProxy, std::unique_ptr<grpc::Server> server,
                  int port)
      : service_(std::move(service)),
        stepProxy_(std::move(stepProxy)),
        server_(std::move(server)),
        port_(port) {}
  ~GrpcQueryServer() override { stop(); }
  GrpcQueryServer(const GrpcQueryServer&) = delete;
  GrpcQueryServer& operator=(const GrpcQueryServer&) = delete;

  int port() const override { return port_; }
  void stop() override {
    const std::lock_guard lock(mutex_);
    if (stopped_) return;
    stopped_ = true;
    // Calls in flight get a second to finish; they only read an immutable state.
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    server_->Wait();
  }

 private:
  std::unique_ptr<SchedulerService> service_;
  std::unique_ptr<grpc::Service> stepProxy_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::mutex mutex_;
  bool stopped_ = false;
};

}  // namespace

StatusOr<std::unique_ptr<QueryServer>> startQueryServer(const ServerOptions& options,
                                                        StateSource state, TestOnlyHandler testOnly,
                                                        access::Authorizer& authorizer,
                                                        RecordQuery records, StepRouter steps) {
  if (options.certificatePem.empty() || options.privateKeyPem.empty()) {
    return invalidArgument("the query API serves TLS only: a certificate and key are required");
  }
  grpc::SslServerCredentialsOptions tls;
  tls.pem_key_cert_pairs.push_back({options.privateKeyPem, options.certificatePem});
  auto service = std::make_unique<SchedulerService>(std::move(state), std::move(testOnly),
                                                    std::move(records), authorizer, options);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(options.address, grpc::SslServerCredentials(tls), &port);
  grpc::ResourceQuota quota("kubeslurm-query-api");
  quota.SetMaxThreads(std::max(options.maxThreads, 2));
  builder.SetResourceQuota(quota);
  builder.SetMaxReceiveMessageSize(options.maxReceiveBytes);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, options.maxConcurrentStreams);
  builder.RegisterService(service.get());
  std::unique_ptr<grpc::Service> stepProxy;
  if (steps) {
    SchedulerService* gate = service.get();
    stepProxy = makeStepProxyService(
        std::move(steps),
        [gate](const grpc::ServerContext& context) { return gate->authenticate(context); },
        authorizer, options.stepProxy);
    builder.RegisterService(stepProxy.get());
  }
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    return invalidArgument("cannot serve gRPC on " + options.address +
                           " (address in use, or the certificate or key is unusable)");
  }
  return std::unique_ptr<QueryServer>(std::make_unique<GrpcQueryServer>(
      std::move(service), std::move(stepProxy), std::move(server), port));
}

}  // namespace kubeslurm::rpc
